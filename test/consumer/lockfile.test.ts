/**
 * `engines` says what is tested. CI (.ci/run) runs the whole suite on Node 24 (the image's line)
 * and 26, and a part of it on 22 and 20 (.ci/node/package.json pins the four binaries); the
 * package's `engines` names those lines, the service's the image's. The lockfile is read here:
 * a dependency whose `engines` leaves out a line the package or the image claims fails.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import semver from 'semver'
import { root } from '../build-once.js'

interface LockedPackage { version?: string, dev?: boolean, hasInstallScript?: boolean, engines?: { node?: string }, dependencies?: Record<string, string>, optionalDependencies?: Record<string, string> }
interface Lockfile { packages: Record<string, LockedPackage> }

const read = <T> (file: string): T => JSON.parse(readFileSync(join(root, file), 'utf8')) as T
const lock = read<Lockfile>('package-lock.json')
const manifest = read<{ engines: { node: string } }>('package.json')
const service = read<{ engines: { node: string } }>('service/package.json')
const locked = Object.entries(lock.packages).filter(([path]) => path.startsWith('node_modules/'))
const needs = (path: string, info: LockedPackage): string => `${path}@${info.version} needs Node ${info.engines!.node}`

/** The Node lines CI runs (node-20, node-22… in .ci/node/package.json), by major. */
const lines = Object.keys(read<{ dependencies: Record<string, string> }>('.ci/node/package.json').dependencies)
  .map((alias) => Number(/^node-(\d+)$/.exec(alias)?.[1])).sort((a, b) => a - b)
/** The lines `.ci/run` runs the whole suite on (the others: a part of it). */
const wholeSuite = [...readFileSync(join(root, '.ci/run'), 'utf8').matchAll(/^\s*whole (\d+)\b/gm)].map(([, major]) => Number(major))

/** The oldest version of `major` a range allows (undefined: none). */
function oldestOf (range: string, major: number): string | undefined {
  const versions = range.split('||').map((set) => {
    try {
      return semver.minVersion(`${set.trim()} ^${major}.0.0`)?.version
    } catch {
      return undefined
    }
  }).filter((version): version is string => version !== undefined && semver.satisfies(version, range))
  return versions.sort(semver.compare)[0]
}

/** Every package `name` brings at run time, found as Node resolves it from `from` (peers apart: they are the app's). */
function brought (from: string, seen = new Set<string>()): Set<string> {
  const info = lock.packages[from]
  for (const name of Object.keys({ ...info?.dependencies, ...info?.optionalDependencies })) {
    let base = from
    let found: string | undefined
    for (;;) {
      const candidate = `${base === '' ? '' : `${base}/`}node_modules/${name}`
      if (lock.packages[candidate] !== undefined) { found = candidate; break }
      if (base === '') break
      const at = base.lastIndexOf('/node_modules/')
      base = at === -1 ? '' : base.slice(0, at)
    }
    if (found === undefined || seen.has(found)) continue
    seen.add(found)
    brought(found, seen)
  }
  return seen
}

t.test('the lines CI runs: 20, 22, 24, 26; the whole suite on 24 and 26', async (t) => {
  t.same(lines, [20, 22, 24, 26])
  t.same(wholeSuite, [24, 26])
})

t.test('the package\'s engines name each line CI tests, and no odd line (their packages leave them out)', async (t) => {
  for (const major of lines) t.ok(oldestOf(manifest.engines.node, major) !== undefined, `Node ${major}`)
  t.notOk(semver.intersects(manifest.engines.node, '^21'), 'not Node 21 (lru-cache, tap: 20 || >=22)')
  t.notOk(semver.intersects(manifest.engines.node, '^23'), 'not Node 23')
})

t.test('every package the plugin brings runs on the oldest version of each line its engines name', async (t) => {
  const ours = [...brought('')]
  t.ok(ours.length > 15, `${ours.length} packages come with the plugin`)
  for (const major of lines) {
    const oldest = oldestOf(manifest.engines.node, major)!
    const refused = ours.map((path) => [path, lock.packages[path]] as const)
      .filter(([, info]) => info.engines?.node !== undefined && !semver.satisfies(oldest, info.engines.node))
      .map(([path, info]) => needs(path, info))
    t.same(refused, [], `all run on Node ${oldest}`)
  }
})

t.test('the image is built on the line its service names, and every package it ships runs there', async (t) => {
  const from = [...readFileSync(join(root, 'Dockerfile'), 'utf8').matchAll(/^FROM node:(\d+)-/gm)].map(([, major]) => Number(major))
  t.same(new Set(from), new Set([semver.minVersion(service.engines.node)!.major]), `every FROM names Node ${service.engines.node}`)
  t.ok(wholeSuite.includes(from[0]!), 'CI runs the whole suite on the image\'s line')
  const oldest = semver.minVersion(service.engines.node)!.version
  const shipped = locked.filter(([, info]) => info.dev !== true)
  t.ok(shipped.length > 50, `${shipped.length} production packages are locked`)
  t.same(shipped.filter(([, info]) => info.engines?.node !== undefined && !semver.satisfies(oldest, info.engines.node)).map(([path, info]) => needs(path, info)), [], `all run on Node ${oldest}`)
})

t.test('every package CI installs runs on each line the whole suite runs on (tools may ask for a later minor)', async (t) => {
  for (const major of wholeSuite) {
    t.same(locked.filter(([, info]) => info.engines?.node !== undefined && !semver.intersects(info.engines.node, `^${major}`)).map(([path, info]) => needs(path, info)), [], `Node ${major}`)
  }
})

t.test('the image installs with --ignore-scripts: no package it ships has an install script (a native addon would need them)', async (t) => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8')
  t.match(dockerfile, /^RUN npm ci [^\n]*--ignore-scripts/m, 'the build stage skips install scripts (better-sqlite3, a devDependency, compiles with Python)')
  const scripted = locked.filter(([, info]) => info.hasInstallScript === true && info.dev !== true).map(([path]) => path)
  t.same(scripted, [], 'only devDependencies have install scripts')
})
