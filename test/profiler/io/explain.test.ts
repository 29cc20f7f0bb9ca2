/**
 * The Database panel's EXPLAIN, on demand, against real servers: a read made through a pg pool,
 * a pg connection of its own, a mysql2 pool and better-sqlite3 is explained through it, with its
 * original values (a secret one too, though the page never shows it); anything but a read offers
 * no EXPLAIN and is refused; a cross-site POST is refused; a statement this process did not
 * record (another process's storage) says it cannot be explained. Its runnable form and Copy
 * button, and the N+1 group's differing parameters, are in the panel.
 */
import t from 'tap'
import type { Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import pg from 'pg'
import { createPool } from 'mysql2'
import Database from 'better-sqlite3'
import type { FastifyInstance } from 'fastify'
import { createKernelApp } from '../../../index.js'
import { page, profiled } from '../helpers.js'
import { profilerOf } from '../../helpers.js'
import { TestPostgres } from '../../postgres/server.js'
import { TestMariaDb } from '../../mariadb/server.js'
import { forgetExplainables } from '../../../src/profiler/panels/db/explain.js'

const postgres = await TestPostgres.start(t)
const mariadb = await TestMariaDb.start(t)
const pool = new pg.Pool({ connectionString: postgres.url, max: 2 })
const mysql = createPool({ ...mariadb.connection, connectionLimit: 2 })
const sqlite = new Database(':memory:')
t.teardown(async () => { await pool.end(); await new Promise((resolve) => { mysql.end(resolve) }); sqlite.close() })
pool.on('error', () => {})
await pool.query('CREATE TABLE members (id int PRIMARY KEY, name text, api_key text)')
await pool.query('INSERT INTO members SELECT g, \'m\' || g, \'key-\' || g FROM generate_series(1, 50) g')
await mysql.promise().query('CREATE TABLE members (id INT PRIMARY KEY, name VARCHAR(20), api_key VARCHAR(20))')
sqlite.exec('CREATE TABLE members (id INTEGER PRIMARY KEY, name TEXT)')

/** V8's collector, asked for: a connection the app dropped is gone, as it is in a long-running process */
setFlagsFromString('--expose-gc')
const collectGarbage = runInNewContext('gc') as () => void

/** A POST as the panel's form sends it (a browser's same-origin headers), `headers` changing them (null: left out). */
const post = (app: FastifyInstance, url: string, headers: Record<string, string | null> = {}) => {
  const all: Record<string, string | null> = { host: 'localhost', 'content-type': 'text/plain', 'sec-fetch-site': 'same-origin', origin: 'http://localhost', ...headers }
  return app.inject({ method: 'POST', url, headers: Object.fromEntries(Object.entries(all).filter(([, value]) => value !== null)) as Record<string, string>, payload: '' })
}

/** The EXPLAIN forms' actions of a Database panel, in order. */
function explainActions (html: string): string[] {
  return [...html.matchAll(/<form method="post" action="([^"]+)" enctype="text\/plain" class="explain">/g)].map((match) => match[1]!)
}

t.test('pg: a read through the pool and through a connection of its own is explained with its values; a write is not offered', async (t) => {
  const client = new pg.Client({ connectionString: postgres.url })
  await client.connect()
  t.teardown(() => client.end())
  const app = await createKernelApp({ kernel: { debug: true } })
  t.teardown(() => app.close())
  app.get('/members', async () => {
    await pool.query('SELECT name FROM members WHERE id = $1 AND api_key = $2', [7, 'key-7'])
    await client.query({ text: 'SELECT count(*) FROM members WHERE name LIKE $1', values: ['m%'] })
    await pool.query('UPDATE members SET name = $1 WHERE id = $2', ['x', 1])
    await pool.query('WITH gone AS (DELETE FROM members WHERE id = $1 RETURNING id) SELECT * FROM gone', [50])
    return 'ok'
  })
  const { token, profile } = await profiled(app, { url: '/members' })
  const statements = profile.collected.db!.statements
  t.same(statements.map((s) => s.explain !== undefined), [true, true, false, false], 'only the reads can be explained (a data-modifying CTE is no read)')
  t.equal(statements[0].runnable, 'SELECT name FROM members WHERE id = 7 AND api_key = \'******\'', 'the runnable form, the secret value masked')
  const panel = await page(app, `/_profiler/${token}?panel=db`)
  const actions = explainActions(panel.body)
  t.equal(actions.length, 2, 'an Explain button for each read')
  t.match(panel.body, /<button type="button" class="copy" data-copy="SELECT name FROM members WHERE id &#x3D; 7 AND api_key &#x3D; &#x27;\*\*\*\*\*\*&#x27;"/, 'Copy copies the runnable form')
  t.match(panel.body, /<script src="\/_profiler\/profiler.js" nonce="[\w-]+"><\/script>/, 'the page\'s script, with a nonce')

  const viaPool = await post(app, actions[0]!)
  t.equal(viaPool.statusCode, 200)
  t.match(viaPool.body, /<table class="plan" id="explain-plan">[\s\S]*QUERY PLAN[\s\S]*Index Scan using members_pkey on members/, 'PostgreSQL\'s plan, through the pool, with the original values')
  t.notMatch(viaPool.body, 'key-7', 'the secret value is used, never shown')
  t.match(viaPool.body, /Index Cond: \(id &#x3D; 7\)[\s\S]*Filter: \(api_key &#x3D; &#x27;\*\*\*\*\*\*&#x27;::text\)/, 'the plan quotes it masked')
  const viaClient = await post(app, actions[1]!)
  t.match(viaClient.body, /QUERY PLAN[\s\S]*Seq Scan on members[\s\S]*Filter: \(name ~~ &#x27;m%&#x27;::text\)/, 'through a connection with the client\'s settings')

  t.equal((await post(app, actions[0]!, { 'sec-fetch-site': 'cross-site' })).statusCode, 403, 'a cross-site POST is refused')
  t.equal((await post(app, actions[0]!, { 'sec-fetch-site': null, origin: 'https://evil.example' })).statusCode, 403, 'so is one from another origin')
  t.equal((await app.inject({ url: actions[0]!, headers: { host: 'localhost' } })).statusCode, 404, 'GET is no way to run it')
  t.equal((await post(app, `/_profiler/${token}/explain/nope`)).statusCode, 404, 'an id the profile does not carry')
  t.equal((await post(app, actions[0]!, { 'x-forwarded-for': '203.0.113.9' })).statusCode, 404, 'the profiler\'s access rules apply')
})

t.test('mysql2 pool and better-sqlite3', async (t) => {
  const app = await createKernelApp({ kernel: { debug: true } })
  t.teardown(() => app.close())
  app.get('/both', async () => {
    await mysql.promise().execute('SELECT name FROM members WHERE id = ?', [3])
    sqlite.prepare('SELECT name FROM members WHERE id = ?').get(3)
    return 'ok'
  })
  const { token } = await profiled(app, { url: '/both' })
  const actions = explainActions((await page(app, `/_profiler/${token}?panel=db`)).body)
  t.equal(actions.length, 2)
  const mariadbPlan = await post(app, actions[0]!)
  t.match(mariadbPlan.body, /<th>select_type<\/th>[\s\S]*<td>SIMPLE<\/td>/, 'MariaDB\'s plan, through the pool')
  const sqlitePlan = await post(app, actions[1]!)
  t.match(sqlitePlan.body, /<th>detail<\/th>[\s\S]*SEARCH members USING INTEGER PRIMARY KEY/, 'SQLite\'s query plan')
})

t.test('a statement this process did not record cannot be explained, and the page says so', async (t) => {
  const app = await createKernelApp({ kernel: { debug: true } })
  t.teardown(() => app.close())
  app.get('/one', async () => (await pool.query('SELECT 1 AS one WHERE $1::int > 0', [1])).rows)
  const { token } = await profiled(app, { url: '/one' })
  const [action] = explainActions((await page(app, `/_profiler/${token}?panel=db`)).body)
  forgetExplainables()
  const answer = await post(app, action!)
  t.equal(answer.statusCode, 410)
  t.match(answer.body, /recorded by another process/)
})

t.test('the N+1 group lists what differs in each execution', async (t) => {
  const app = await createKernelApp({ kernel: { debug: true } })
  t.teardown(() => app.close())
  app.get('/n1', async () => {
    for (const id of [4, 5, 6]) await pool.query('SELECT name FROM members WHERE id = $1', [id])
    return 'ok'
  })
  const { token } = await profiled(app, { url: '/n1' })
  const panel = await page(app, `/_profiler/${token}?panel=db`)
  t.match(panel.body, /<table class="executions"><tr><td class="mono">#1<\/td><td class="mono">\[4\]<\/td><\/tr><tr><td class="mono">#2<\/td><td class="mono">\[5\]<\/td><\/tr><tr><td class="mono">#3<\/td><td class="mono">\[6\]<\/td><\/tr><\/table>/)
})

t.test('a command\'s statements (a unit record() recorded) are explained while their pool is alive in the process', async (t) => {
  for (const storage of ['memory', 'file'] as const) await t.test(`${storage} storage`, async (t) => commandExplained(t, storage))
})

async function commandExplained (t: Test, storage: 'memory' | 'file'): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'kernel-explain-'))
  t.teardown(() => rmSync(directory, { recursive: true, force: true }))
  const app = await createKernelApp({ kernel: { debug: true, profiler: storage === 'file' ? { storage, directory } : {} } })
  t.teardown(() => app.close())
  await app.ready()
  let token = ''
  // a connection the command closes, as an ORM's pool closes its idle ones (Knex, Sequelize)
  let own: pg.Client | undefined = new pg.Client({ connectionString: postgres.url })
  await own.connect()
  await app.kernelProfiler.record({ kind: 'command', name: 'members:report' }, async () => {
    token = profilerOf(app).currentToken()!
    await own!.query('SELECT name FROM members WHERE id = $1', [5])
    await pool.query('SELECT name FROM members WHERE id = $1', [3])
    const connection = await pool.connect()
    try {
      await connection.query('SELECT count(*) FROM members WHERE id < $1', [10])
    } finally {
      connection.release()
    }
    sqlite.prepare('SELECT name FROM members WHERE id = ?').get(1)
  })
  await app.kernelProfiler.settled()
  const profile = await app.kernelProfiler.profileOf(token)
  t.same(profile.collected.db!.statements.map((s) => s.explain !== undefined), [true, true, true, true], 'each read offers EXPLAIN')
  // the command's own connection closed, and collected
  await own.end()
  own = undefined
  await new Promise((resolve) => setImmediate(resolve))
  collectGarbage()
  await new Promise((resolve) => setImmediate(resolve))
  const actions = explainActions((await page(app, `/_profiler/${token}?panel=db`)).body)
  t.equal(actions.length, 4)
  for (const [index, action] of actions.entries()) {
    const res = await post(app, action)
    t.equal(res.statusCode, 200, `statement ${index + 1}: explained (${res.statusCode === 200 ? 'a plan' : res.body.match(/<p[^>]*>([^<]*)</)?.[1] ?? ''})`)
    t.match(res.body, /<table class="plan" id="explain-plan">/)
  }
}
