/**
 * The repository's own install (the service, its container image, CI) runs on the Node it says:
 * a transitive dependency that moved to Node 22 (light-my-request 6.8 → cookie 2, @fastify/static
 * 10 → content-disposition 3) would otherwise ship in the image while `engines` says 20.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import semver from 'semver'
import { root } from '../build-once.js'

interface LockedPackage { version?: string, dev?: boolean, hasInstallScript?: boolean, engines?: { node?: string } }
interface Lockfile { packages: Record<string, LockedPackage> }

const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as Lockfile
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } }
const oldest = semver.minVersion(manifest.engines.node)!.version
const locked = Object.entries(lock.packages).filter(([path]) => path.startsWith('node_modules/'))

t.test('every package the service and its image install supports the oldest Node package.json names', async (t) => {
  const shipped = locked.filter(([, info]) => info.dev !== true)
  t.ok(shipped.length > 50, `${shipped.length} production packages are locked`)
  const refused = shipped
    .filter(([, info]) => info.engines?.node !== undefined && !semver.satisfies(oldest, info.engines.node))
    .map(([path, info]) => `${path}@${info.version} needs Node ${info.engines!.node}`)
  t.same(refused, [], `all run on Node ${oldest}`)
})

t.test('every package CI installs runs on some Node 20 (tools may ask for a later 20.x)', async (t) => {
  const refused = locked
    .filter(([, info]) => info.engines?.node !== undefined && !semver.intersects(info.engines.node, '^20'))
    .map(([path, info]) => `${path}@${info.version} needs Node ${info.engines!.node}`)
  t.same(refused, [])
})

t.test('the image installs with --ignore-scripts: no package it ships has an install script (a native addon would need them)', async (t) => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8')
  t.match(dockerfile, /^RUN npm ci [^\n]*--ignore-scripts/m, 'the build stage skips install scripts (better-sqlite3, a devDependency, compiles with Python)')
  const scripted = locked.filter(([, info]) => info.hasInstallScript === true && info.dev !== true).map(([path]) => path)
  t.same(scripted, [], 'only devDependencies have install scripts')
})
