/**
 * The libraries the profiler patches declare the versions they are written for; a copy of
 * another version, one lacking a method the instrumentation wraps, or one the instrumentation
 * throws on, is said once through the app's logger, never silently left unseen. Fake copies of
 * the libraries, in folders of their own, loaded before and after the kernel's registration.
 */
import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { ProfilerIntegration } from '../../index.js'
import { wrapMethod } from '../../src/profiler/instrument/patch.js'
import { BULLMQ_VERSIONS } from '../../src/profiler/panels/queue/bullmq.js'
import { NODEMAILER_VERSIONS } from '../../src/profiler/panels/mail/nodemailer.js'
import { PG_POOL_VERSIONS, PG_VERSIONS } from '../../src/profiler/panels/db/pg.js'
import { BETTER_SQLITE3_VERSIONS } from '../../src/profiler/panels/db/sqlite.js'
import { MYSQL2_VERSIONS } from '../../src/profiler/panels/db/capture.js'
import { IOREDIS_VERSIONS, NODE_REDIS_VERSIONS } from '../../src/profiler/panels/cache/capture.js'
import { buildApp } from '../helpers.js'

const root = mkdtempSync(join(tmpdir(), 'kernel-versions-'))
t.teardown(() => { rmSync(root, { recursive: true, force: true }) })
const load = createRequire(join(root, 'index.js'))

/** A package `name@version` in a folder of its own under `root`, with `files` (path → source); returns its folder. */
function fakePackage (folder: string, name: string, version: string, files: Record<string, string>): string {
  const dir = join(root, folder, 'node_modules', name)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version, main: Object.keys(files)[0] }))
  for (const [file, source] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true })
    writeFileSync(join(dir, file), source)
  }
  return dir
}

/** The warnings an app logged, as parsed lines. */
function logger (): { lines: Array<{ msg: string, library?: string, version?: string, missing?: string[] }>, options: object } {
  const lines: Array<{ msg: string }> = []
  return { lines, options: { pluginTimeout: 120_000, logger: { level: 'warn', stream: { write: (line: string) => { lines.push(JSON.parse(line) as { msg: string }) } } } } }
}

/** An app's integration patching `fake-lib` (its `run`), written for its 1.x versions. */
const fakeLib: ProfilerIntegration = {
  name: 'fake-lib',
  modules: [{
    name: 'fake-lib',
    files: ['/fake-lib/index.js'],
    versions: '>=1.0.0 <2',
    instrument (exports, copy) {
      const api = exports as { run?: unknown, broken?: boolean }
      if (api.broken === true) throw new Error('a shape it does not know')
      if (typeof api.run !== 'function') {
        copy.lacks(['run'], 'the runs a unit makes')
        return undefined
      }
      return wrapMethod(api, 'run', (run: () => unknown) => function (this: unknown) { return run.call(this) })
    }
  }]
}

t.test('each patched library declares its range in code', async (t) => {
  t.same({ pg: PG_VERSIONS, 'pg-pool': PG_POOL_VERSIONS, 'better-sqlite3': BETTER_SQLITE3_VERSIONS, bullmq: BULLMQ_VERSIONS, nodemailer: NODEMAILER_VERSIONS }, {
    pg: '>=8.0.3 <9', 'pg-pool': '>=3.1.1 <4', 'better-sqlite3': '>=12.0.0 <14', bullmq: '>=5.0.0 <7', nodemailer: '>=6.0.0 <11'
  })
  // and the libraries whose channels are read: the versions that publish them (.ci/matrix.sh runs both ends of each)
  t.same({ mysql2: MYSQL2_VERSIONS, ioredis: IOREDIS_VERSIONS, redis: NODE_REDIS_VERSIONS }, { mysql2: '>=3.20.0 <4', ioredis: '>=6.0.0 <7', redis: '>=5.12.0 <7' })
})

t.test('a copy of another version, or lacking what is wrapped, or one the instrumentation throws on: said once through the app\'s logger', async (t) => {
  // loaded before the registration (found in require.cache) and after it (through the loader)
  const early = fakePackage('early', 'fake-lib', '9.1.0', { 'index.js': 'module.exports = { other () {} }' })
  load(join(early, 'index.js'))
  const log = logger()
  const app = await buildApp({ debug: true, profiler: { integrations: [fakeLib] } }, log.options)
  t.teardown(() => app.close())
  const late = fakePackage('late', 'fake-lib', '1.4.0', { 'index.js': 'module.exports = { run () { return 1 } }' })
  const lateCopy = load(join(late, 'index.js')) as { run: () => number }
  const broken = fakePackage('broken', 'fake-lib', '1.5.0', { 'index.js': 'module.exports = { broken: true }' })
  load(join(broken, 'index.js'))
  // the same version again, in another folder: nothing more is said
  load(join(fakePackage('again', 'fake-lib', '9.1.0', { 'index.js': 'module.exports = { other () {} }' }), 'index.js'))

  const said = log.lines.filter((line) => line.library === 'fake-lib')
  t.same(said.map((line) => line.msg), [
    'fastify-kernel: fake-lib 9.1.0 is outside the versions the profiler is written for (>=1.0.0 <2): it is instrumented as far as its shape allows, and what it lacks is said',
    'fastify-kernel: fake-lib 9.1.0 has no run (not a function), so the profiles miss the runs a unit makes',
    'fastify-kernel: fake-lib 1.5.0 could not be instrumented (a shape it does not know), so the profiles miss its calls'
  ], 'each once, naming the library, its version and what is not seen')
  t.same(said[1]!.missing, ['run'])
  t.notMatch(String(lateCopy.run), 'return 1', 'a copy of a known version and shape is instrumented, silently')
  t.equal(lateCopy.run(), 1)

  // a second app in the process: nothing said again
  const second = logger()
  const other = await buildApp({ debug: true, profiler: { integrations: [fakeLib] } }, second.options)
  load(join(fakePackage('third', 'fake-lib', '9.1.0', { 'index.js': 'module.exports = { other () {} }' }), 'index.js'))
  await other.close()
  t.same(second.lines.filter((line) => line.library === 'fake-lib'), [], 'once per process')
  await app.close()
  t.match(String(lateCopy.run), 'return 1', 'restored when the app closes')
})

t.test('the built-in BullMQ instrumentation: a copy lacking methods, and one outside the declared range', async (t) => {
  const log = logger()
  const app = await buildApp({ debug: true }, log.options)
  t.teardown(() => app.close())
  const lacking = fakePackage('bull-lacking', 'bullmq', '6.1.0', { 'dist/cjs/index.js': 'class Queue { add () {} }\nclass Worker {}\nmodule.exports = { Queue, Worker }' })
  load(join(lacking, 'dist/cjs/index.js'))
  const newer = fakePackage('bull-newer', 'bullmq', '7.0.0', {
    'dist/cjs/index.js': 'class Queue { add () { return "own" } addBulk () {} }\nclass Worker { callProcessJob () {} }\nmodule.exports = { Queue, Worker }'
  })
  const { Queue } = load(join(newer, 'dist/cjs/index.js')) as { Queue: { prototype: { add: () => unknown } } }

  const said = log.lines.filter((line) => line.library === 'bullmq')
  t.same(said.map((line) => line.msg), [
    'fastify-kernel: bullmq 6.1.0 has no Queue#addBulk, Worker#callProcessJob (not a function), so the profiles miss the jobs a unit adds and the jobs its Workers run',
    `fastify-kernel: bullmq 7.0.0 is outside the versions the profiler is written for (${BULLMQ_VERSIONS}): it is instrumented as far as its shape allows, and what it lacks is said`
  ])
  t.notMatch(String(Queue.prototype.add), 'return "own"', 'the copy outside the range is instrumented all the same (its shape is known)')
  await app.close()
  t.match(String(Queue.prototype.add), 'return "own"', 'and restored when the app closes')
})
