/**
 * Whatever the order of pg's loading and the kernel's registration, ESM or CommonJS, the app's
 * pg is seen; a pg that publishes `pg:query` itself is recognised at its first statement and
 * heard on the channel from then on, each statement recorded once.
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { createKernelApp } from '../../../index.js'
import { profiled } from '../helpers.js'
import { TestPostgres } from '../../postgres/server.js'
import { buildOnce } from '../../build-once.js'

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'pg-loading')
const run = promisify(execFile)

t.test('pg imported (ESM) or required (CommonJS) after the kernel is registered', async (t) => {
  buildOnce()
  const postgres = await TestPostgres.start(t)
  const env = { ...process.env, DATABASE_URL: postgres.url }
  const esm = await run(process.execPath, [join(FIXTURES, 'late.mjs')], { env })
  t.same(JSON.parse(esm.stdout), [{ statement: 'SELECT $1::text AS late', params: ['esm'] }], 'ESM: import after registration, pool after it')
  const cjs = await run(process.execPath, [join(FIXTURES, 'late.cjs')], { env })
  t.same(JSON.parse(cjs.stdout), [{ statement: 'SELECT $1::text AS late', params: ['cjs'] }], 'CommonJS: require after registration, a Client of its own')
})

t.test('a pg that publishes pg:query is heard on its channel, not instrumented', async (t) => {
  const app = await createKernelApp({ kernel: { debug: true } })
  t.teardown(() => app.close())
  // loaded after the kernel: the instrumentation sees it load
  const { Client } = createRequire(import.meta.url)(join(FIXTURES, 'publishing', 'pg', 'lib', 'index.js')) as { Client: new () => { query: (text: string, values?: unknown[]) => Promise<unknown> } }
  const instrumented = Client.prototype.query
  t.notMatch(String(instrumented), 'tracePromise', 'instrumented while it is not known to publish')
  const client = new Client()
  app.get('/published', async () => {
    for (const id of [1, 2, 3]) await client.query('SELECT * FROM t WHERE id = $1', [id])
    return 'ok'
  })
  const { profile } = await profiled(app, { url: '/published' })
  t.same(profile.collected.db!.statements.map((s) => [s.statement, s.params, s.database, s.rows]), [
    ['SELECT * FROM t WHERE id = $1', [1], 'published', 1],
    ['SELECT * FROM t WHERE id = $1', [2], 'published', 1],
    ['SELECT * FROM t WHERE id = $1', [3], 'published', 1]
  ], 'each statement once: the first through the instrumentation, the next ones through the channel')
  t.not(Client.prototype.query, instrumented, 'found to publish at its first statement: left alone from then on')
  t.match(String(Client.prototype.query), 'tracePromise', 'its own query() back')
})
