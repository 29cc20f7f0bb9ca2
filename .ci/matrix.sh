#!/usr/bin/env bash
# The version matrix: each library the profiler instruments, or whose channels it
# reads, declares in code the versions it is written for; this runs that library's panel tests
# against the OLDEST and the NEWEST published version of the range, on Node 24 (better-sqlite3's
# 12.x on Node 22: see below).
#
# - The ranges are read from the code (the exported constants, through tsx), the versions from
#   the registry (`npm view <lib> versions`, one look-up a library), filtered by the range.
# - Each copy is installed into a prefix of its own, `.ci/matrix/<lib>@<version>/` (kept: a
#   second run with the same packages on the same line installs nothing), apart from the
#   repository's node_modules; better-sqlite3 12 is built there by node-gyp against its line's
#   headers (`npm_config_nodedir`, as node-line.sh does); 13 ships its N-API build.
# - The tests load that copy through .ci/matrix-copies.mjs (preloaded with NODE_OPTIONS): every
#   `import`/`require()` of the library's name resolves inside the prefix. A run passes when tap
#   passes AND the copy was loaded from the prefix (its loaded.txt), so that a run that silently
#   used the repository's copy fails.
#
# `bash .ci/matrix.sh` runs it all; `bash .ci/matrix.sh pg nodemailer` some libraries;
# `bash .ci/matrix.sh nodemailer@6.4.0` one version (to find where a range's floor stands). Prints
# one line a library and version, then the time; exits 1 when any failed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

node24=$root/.ci/node/node_modules/node-24
if [ ! -x "$node24/bin/node" ]; then
  npm ci --prefix "$root/.ci/node" --no-audit --no-fund --loglevel=error >&2
fi
base_path=$PATH
export PATH="$node24/bin:$PATH"
export npm_config_nodedir=$node24

# library | its range's constant and file | what is installed beside it (a range's constant too) | its panel tests
MATRIX=(
  "pg|PG_VERSIONS src/profiler/panels/db/pg.ts|pg-pool:PG_POOL_VERSIONS|test/profiler/io/pg.test.ts"
  "better-sqlite3|BETTER_SQLITE3_VERSIONS src/profiler/panels/db/sqlite.ts||test/profiler/io/sqlite.test.ts"
  "bullmq|BULLMQ_VERSIONS src/profiler/panels/queue/bullmq.ts||test/profiler/io/bullmq.test.ts"
  "nodemailer|NODEMAILER_VERSIONS src/profiler/panels/mail/nodemailer.ts||test/profiler/io/nodemailer.test.ts"
  "mysql2|MYSQL2_VERSIONS src/profiler/panels/db/capture.ts||test/profiler/io/db.test.ts"
  "ioredis|IOREDIS_VERSIONS src/profiler/panels/cache/capture.ts||test/profiler/io/cache.test.ts"
  "redis|NODE_REDIS_VERSIONS src/profiler/panels/cache/capture.ts||test/profiler/io/cache.test.ts"
)

# the range a constant of a source file holds
range_of () { node --import tsx --input-type=module -e "const m = await import('$root/$2'); console.log(m['$1'])"; }
# the oldest and the newest published version of $1 in range $2 (prereleases left out)
ends_of () {
  npm view "$1" versions --json | node -e "
    const semver = require('$root/node_modules/semver')
    const all = JSON.parse(require('fs').readFileSync(0, 'utf8')).filter((v) => semver.satisfies(v, process.argv[1]))
    all.sort(semver.compare)
    if (all.length === 0) process.exit(1)
    console.log(all[0], all[all.length - 1])" "$2"
}

only=("$@")
report=()
status=0
start=$SECONDS
for entry in "${MATRIX[@]}"; do
  IFS='|' read -r lib declared companion tests <<< "$entry"
  if [ "${#only[@]}" -gt 0 ] && [[ ! " ${only[*]} " == *" $lib "* ]] && [[ ! " ${only[*]} " == *" $lib@"* ]]; then continue; fi
  range=$(range_of $declared)
  read -r oldest newest <<< "$(ends_of "$lib" "$range")"
  # one version asked for: run as the range's oldest (its companion's oldest beside it)
  asked=$(printf '%s\n' "${only[@]}" | sed -n "s/^$lib@//p" | head -n 1)
  if [ -n "$asked" ]; then oldest=$asked newest=$asked; fi
  companion_ends=()
  if [ -n "$companion" ]; then
    companion_range=$(range_of "${companion#*:}" "${declared#* }")
    read -r -a companion_ends <<< "$(ends_of "${companion%%:*}" "$companion_range")"
  fi
  ends=(oldest newest)
  [ "$oldest" = "$newest" ] && ends=(oldest)
  for end in "${ends[@]}"; do
    version=${!end}
    packages=("$lib@$version")
    names=$lib
    if [ -n "$companion" ]; then
      if [ "$end" = oldest ]; then packages+=("${companion%%:*}@${companion_ends[0]}"); else packages+=("${companion%%:*}@${companion_ends[1]}"); fi
      names+=",${companion%%:*}"
    fi
    # the Node line the version runs on: 24, but for better-sqlite3 before 13, whose native
    # objects (node::ObjectWrap) abort Node 24 when V8 collects one outside a JavaScript context
    # (an upstream issue 13 fixed by moving to N-API): those run on 22, the newest line they hold on
    line=24
    if [ "$lib" = better-sqlite3 ] && [ "${version%%.*}" -lt 13 ]; then line=22; fi
    line_dir=$root/.ci/node/node_modules/node-$line
    export PATH="$line_dir/bin:$base_path" npm_config_nodedir=$line_dir
    prefix=$root/.ci/matrix/$lib@$version
    # what a prefix was installed with: its packages, built for this line's Node
    installed=$(printf '%s\n' "${packages[@]}" "node $line")
    took=$SECONDS
    outcome=passed
    # installed before with the same packages on the same line: kept
    if [ "$(cat "$prefix/installed.txt" 2>/dev/null)" != "$installed" ]; then
      rm -rf "$prefix"
      mkdir -p "$prefix"
      echo "::: installing ${packages[*]} (Node $line) into .ci/matrix/$lib@$version" >&2
      if npm install --prefix "$prefix" --no-save --no-audit --no-fund --no-package-lock --loglevel=error --foreground-scripts "${packages[@]}" >"$prefix/install.log" 2>&1; then
        printf '%s\n' "$installed" >"$prefix/installed.txt"
      else
        outcome="not installed ($prefix/install.log)"
      fi
    fi
    if [ "$outcome" = passed ]; then
      rm -f "$prefix/loaded.txt"
      echo "::: $lib $version ($end of $range) on Node $line: ${packages[*]}: npx tap $tests" >&2
      # tap's TAP output kept in the prefix (tap.log); what failed is printed
      if ! KERNEL_MATRIX_PREFIX=$prefix KERNEL_MATRIX_PACKAGES=$names NODE_OPTIONS="--import=$root/.ci/matrix-copies.mjs ${NODE_OPTIONS:-}" \
        npx tap --reporter=tap $tests >"$prefix/tap.log" 2>&1; then
        grep -E '^\s*not ok|^# \{ total' "$prefix/tap.log" >&2 || true
        outcome="failed ($(grep -E '^# \{ total' "$prefix/tap.log" | tail -n 1 | sed 's/^# //'), .ci/matrix/$lib@$version/tap.log)"
      elif ! grep -q "file://$prefix/node_modules/$lib/" "$prefix/loaded.txt" 2>/dev/null; then
        outcome="failed: the tests did not load the copy in $prefix"
      fi
    fi
    [[ "$outcome" == passed ]] || status=1
    report+=("$lib $version ($end of $range, Node $line): $outcome in $((SECONDS - took)) s")
  done
done
printf '%s\n' "${report[@]}"
echo "matrix: $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s"
exit "$status"
