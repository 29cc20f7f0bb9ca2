/**
 * EXPLAIN sends exactly one read, whatever the recorded text holds (issue 36, findings 1 and 5),
 * against a real PostgreSQL and MariaDB:
 * - the stacked writes of the review (`SELECT 1 --x\r; COMMIT; INSERT …` through pg and Knex,
 *   `SELECT 1 --1; COMMIT; INSERT …` through mysql2 with `multipleStatements`) are not offered an
 *   Explain, are refused when asked anyway, and are refused by the server itself when the
 *   lexer's check is left out (the protocol's single-statement form): the table's row count
 *   never changes;
 * - the lexer counts statements as the servers do (each case run by the server too);
 * - EXPLAIN runs one at a time per database, on a connection of its own, for a bounded time:
 *   100 at once through Knex and 40 slow ones on MariaDB are answered 200 or 503 (never 500),
 *   and the app's own requests through its pools are answered meanwhile;
 * - the error page never quotes a value the Database panel masks.
 */
import t from 'tap'
import pg from 'pg'
import knex from 'knex'
import { createPool } from 'mysql2'
import type { Pool as MysqlPool, RowDataPacket } from 'mysql2'
import type { FastifyInstance } from 'fastify'
import type { Profile } from '../../../src/profiler/profile.js'
import { createKernelApp } from '../../../index.js'
import { profiled } from '../helpers.js'
import { TestPostgres } from '../../postgres/server.js'
import { TestMariaDb } from '../../mariadb/server.js'
import { ExplainFailure, explain, explainable, setExplainTimeout } from '../../../src/profiler/panels/db/explain.js'
import type { ExplainVia } from '../../../src/profiler/panels/db/explain.js'
import { singleReadProblem, statementCount } from '../../../src/profiler/panels/db/sql-statements.js'

const postgres = await TestPostgres.start(t)
const mariadb = await TestMariaDb.start(t)
const pool = new pg.Pool({ connectionString: postgres.url, max: 2 })
pool.on('error', () => {})
const db = knex({ client: 'pg', connection: postgres.url, pool: { min: 0, max: 4 } })
const mysql = createPool({ ...mariadb.connection, connectionLimit: 2, multipleStatements: true })
t.teardown(async () => {
  await pool.end()
  await db.destroy()
  await new Promise((resolve) => { mysql.end(resolve) })
})
await pool.query('CREATE TABLE hits (n int)')
await pool.query('CREATE TABLE members (id int PRIMARY KEY, api_key text, secret_code int)')
await pool.query('INSERT INTO members SELECT g, \'key-\' || g FROM generate_series(1, 20) g')
await mysql.promise().query('CREATE TABLE hits (n INT)')

const pgHits = async (): Promise<number> => Number((await pool.query('SELECT count(*) AS n FROM hits')).rows[0].n)
const mysqlHits = async (): Promise<number> => Number(((await mysql.promise().query('SELECT count(*) AS n FROM hits'))[0] as RowDataPacket[])[0]!.n)

/** A POST as the panel's form sends it. */
const post = async (app: FastifyInstance, url: string) => await app.inject({
  method: 'POST', url, payload: '', headers: { host: 'localhost', 'content-type': 'text/plain', 'sec-fetch-site': 'same-origin' }
})

/** The id under which a statement of a profile was noted for EXPLAIN. */
function explainIdOf (profile: Profile, statement: string): string | undefined {
  return profile.collected.db!.statements.find((recorded) => recorded.statement === statement)?.explain
}

/** A connection Knex's pool holds: the kernel explains through a client of its settings. */
async function knexClient (): Promise<object> {
  const client = await db.client.acquireConnection() as object
  await db.client.releaseConnection(client)
  return client
}

/** mysql2's Connection class, as the kernel notes it from a pooled connection's. */
async function mysqlConnectionClass (): Promise<Function> {
  const pooled = await mysql.promise().getConnection()
  pooled.release()
  return Object.getPrototypeOf(pooled.connection.constructor) as Function
}

t.test('stacked writes through pg, Knex and mysql2 are never explained: the row count does not change', async (t) => {
  const app = await createKernelApp({ kernel: { debug: true } })
  t.teardown(() => app.close())
  const pgStacked = 'SELECT 1 --x\r; COMMIT; INSERT INTO hits VALUES (1)'
  const knexStacked = 'SELECT 1 --x\r; COMMIT; INSERT INTO hits VALUES (2)'
  const mysqlStacked = 'SELECT 1 --1; COMMIT; INSERT INTO hits VALUES (3)'
  app.get('/pg', async () => { await pool.query(pgStacked); return 'ok' })
  app.get('/knex', async () => { await db.raw(knexStacked); return 'ok' })
  app.get('/mysql', async () => { await mysql.promise().query(mysqlStacked); return 'ok' })

  const pgRun = await profiled(app, { url: '/pg' })
  const knexRun = await profiled(app, { url: '/knex' })
  const mysqlRun = await profiled(app, { url: '/mysql' })
  const [pgBefore, mysqlBefore] = [await pgHits(), await mysqlHits()]
  t.equal(pgBefore, 2, 'the app\'s own statements ran their INSERTs, once each (pg, Knex)')
  t.equal(mysqlBefore, 1, 'and through mysql2 with multipleStatements')

  t.equal(explainIdOf(pgRun.profile, pgStacked), undefined, 'pg: no Explain is offered')
  t.equal(explainIdOf(knexRun.profile, knexStacked), undefined, 'Knex: none')
  t.equal(explainIdOf(mysqlRun.profile, mysqlStacked), undefined, 'mysql2: none')

  // asked anyway (an id noted by hand, through the very pools): refused before a byte is sent
  const vias: Array<[string, string, ExplainVia]> = [
    [pgStacked, 'postgresql', { kind: 'pg-pool', handle: pool }],
    [knexStacked, 'postgresql', { kind: 'pg-client', handle: await knexClient() }],
    [mysqlStacked, 'mysql', { kind: 'mysql2-pool', handle: mysql, connectionClass: await mysqlConnectionClass() }]
  ]
  for (const [statement, system, via] of vias) {
    const id = explainable(statement, undefined, system, via)!
    const answer = await explain(id).then(() => 'explained', (error: Error & { statusCode?: number }) => `${error.statusCode} ${error.message}`)
    t.match(answer, /^422 Only one read \(a single SELECT\) is explained, and it holds more than one statement\.$/, `${via.kind}: the lexer refuses it`)
    // the protocol's own lock, the lexer left out: the server refuses a second statement
    const unchecked = await explain(id, { lexer: false }).then(() => undefined, (error: unknown) => error)
    t.type(unchecked, ExplainFailure, `${via.kind}: without the lexer, the server refuses it`)
    t.match((unchecked as Error).message, system === 'postgresql' ? /cannot insert multiple commands into a prepared statement/ : /syntax|prepared statement/, (unchecked as Error).message)
  }
  t.equal(await pgHits(), pgBefore, 'PostgreSQL: no row was inserted again')
  t.equal(await mysqlHits(), mysqlBefore, 'MariaDB: no row was inserted again')
})

t.test('the lexer counts statements as the servers do', async (t) => {
  const client = await pool.connect()
  t.teardown(() => client.release())
  const pgCases: Array<[string, number]> = [
    ['SELECT 1 --x\r; SELECT 2', 2],
    ['SELECT 1 --x\n; SELECT 2', 2],
    ['SELECT 1 -- x; SELECT 2', 1],
    ['SELECT 1 /* /* */ ; SELECT 2 */', 1],
    ['SELECT 1 /* ; */; SELECT 2', 2],
    ['SELECT E\'\\\'; SELECT 2; \'', 1],
    ['SELECT \'\\\'; SELECT 2; --\'', 2],
    ['SELECT $a$ ; $a$', 1],
    ['SELECT $$;$$, 2', 1],
    ['SELECT 1 AS "a;b"; SELECT 2', 2],
    ['SELECT 1 AS a$b; SELECT 2', 2],
    ['SELECT 1 --x\r + 2', 1],
    ['SELECT 1;', 1]
  ]
  for (const [sql, expected] of pgCases) {
    await client.query('BEGIN READ ONLY')
    const result = await client.query(sql)
    await client.query('ROLLBACK')
    const served = Array.isArray(result) ? result.length : 1
    t.equal(served, expected, `PostgreSQL runs ${expected}: ${JSON.stringify(sql)}`)
    t.equal(statementCount(sql, 'postgresql'), served, `the lexer counts ${served}: ${JSON.stringify(sql)}`)
  }
  const mysqlCases: Array<[string, number]> = [
    ['SELECT 1 --1; SELECT 2', 2],
    ['SELECT 1 -- 1; SELECT 2', 1],
    ['SELECT 1 --\t1; SELECT 2', 1],
    ['SELECT 1 # x; SELECT 2', 1],
    ['SELECT 1 #x\r; SELECT 2', 1],
    ['SELECT 1 -- x\r; SELECT 2', 1],
    ['SELECT \'\\\'; SELECT 2; -- \'', 1],
    ['SELECT "\\"; SELECT 2; -- "', 1],
    ['SELECT 1 /* ; */; SELECT 2', 2],
    ['SELECT `a;b` FROM (SELECT 1 AS `a;b`) t', 1],
    ['SELECT 1 AS `x``;`; SELECT 2', 2]
  ]
  for (const [sql, expected] of mysqlCases) {
    const [rows] = await mysql.promise().query(sql)
    const served = Array.isArray(rows) && rows.length > 0 && Array.isArray(rows[0]) ? rows.length : 1
    t.equal(served, expected, `MariaDB runs ${expected}: ${JSON.stringify(sql)}`)
    t.equal(statementCount(sql, 'mysql'), served, `the lexer counts ${served}: ${JSON.stringify(sql)}`)
  }
})

t.test('what the lexer refuses, and what it lets through', async (t) => {
  const refused: Array<[string, string, RegExp]> = [
    ['SELECT 1 --x\r; COMMIT; INSERT INTO t VALUES (1)', 'postgresql', /more than one statement/],
    ['SELECT 1 --1; COMMIT; INSERT INTO t VALUES (1)', 'mysql', /more than one statement/],
    ['SELECT 1 /*!; DELETE FROM t */', 'mysql', /executable comment/],
    ['SELECT 1 /*M!100000 ; DELETE FROM t */', 'mariadb', /executable comment/],
    ['SELECT \'a', 'postgresql', /string is not closed/],
    ['SELECT 1 /* /* */', 'postgresql', /comment is not closed/],
    ['SELECT $x$ ; DELETE', 'postgresql', /dollar-quoted string is not closed/],
    // a backslash the server may or may not read as an escape (standard_conforming_strings off)
    ['SELECT \'\\\'; DELETE FROM t; --\'', 'postgresql', /more than one statement/],
    // NO_BACKSLASH_ESCAPES on: the string ends at the second quote
    ['SELECT \'\\\'; DELETE FROM t; -- \'', 'mysql', /more than one statement/],
    ['SELECT $$ \' $$; DELETE FROM t; -- \'', 'mysql', /more than one statement/],
    ['SELECT 1\0; DELETE FROM t', 'mysql', /NUL/],
    ['WITH gone AS (DELETE FROM t RETURNING id) SELECT * FROM gone', 'postgresql', /DELETE/],
    ['SELECT * INTO backup FROM t', 'postgresql', /INTO/],
    ['SELECT * FROM t FOR UPDATE', 'mysql', /UPDATE/],
    ['SELECT 1 INTO OUTFILE \'/tmp/x\'', 'mysql', /INTO/],
    ['EXPLAIN ANALYZE DELETE FROM t', 'postgresql', /does not start with SELECT/],
    ['COMMIT', 'mysql', /does not start with SELECT/],
    ['SELECT 1', 'oracle', /not read here/]
  ]
  for (const [sql, system, reason] of refused) t.match(singleReadProblem(sql, system), reason, `${system}: ${JSON.stringify(sql)}`)
  const reads: Array<[string, string]> = [
    ['SELECT name FROM members WHERE id = $1', 'postgresql'],
    ['  /* hint */ select 1;', 'postgresql'],
    ['(SELECT 1) UNION (SELECT 2)', 'mysql'],
    ['SELECT updated_at, start, "update" FROM "insert"', 'postgresql'],
    ['SELECT \'; DELETE FROM t\' AS text', 'mysql'],
    ['SELECT 1 -- a comment; DELETE FROM t', 'mysql'],
    ['SELECT 1 --1', 'mysql'],
    ['SELECT E\'it\\\'s\' -- fine', 'postgresql'],
    ['SELECT $body$ ; DELETE $body$', 'postgresql'],
    ['SELECT 1 /* /* nested ; */ ; */', 'postgresql'],
    ['SELECT [a;b] FROM t', 'sqlite'],
    ['SELECT 1 /* unclosed at the end', 'sqlite']
  ]
  for (const [sql, system] of reads) t.equal(singleReadProblem(sql, system), undefined, `${system}: ${JSON.stringify(sql)}`)
})

t.test('100 EXPLAINs at once through Knex: one at a time on its own connection, the rest 503, the app answered', async (t) => {
  const app = await createKernelApp({ kernel: { debug: true } })
  t.teardown(() => app.close())
  app.get('/read', async () => (await db.raw('SELECT id FROM members WHERE id = ?', [3])).rows)
  const { token, profile } = await profiled(app, { url: '/read' })
  const id = profile.collected.db!.statements[0]!.explain!
  t.ok(id, 'the read is offered an Explain')
  const url = `/_profiler/${token}/explain/${id}`
  const burst = Array.from({ length: 100 }, async () => await post(app, url))
  const own = Array.from({ length: 10 }, async () => await app.inject({ url: '/read', headers: { host: 'localhost' } }))
  const [answers, ownAnswers] = [await Promise.all(burst), await Promise.all(own)]
  const statuses = new Map<number, number>()
  for (const answer of answers) statuses.set(answer.statusCode, (statuses.get(answer.statusCode) ?? 0) + 1)
  t.same([...statuses.keys()].sort(), [200, 503], `200 or 503, never a 500: ${JSON.stringify([...statuses])}`)
  t.ok((statuses.get(200) ?? 0) >= 1, 'one at least was explained')
  const refused = answers.find((answer) => answer.statusCode === 503)!
  t.equal(refused.headers['retry-after'], '1')
  t.match(refused.body, /Another EXPLAIN is running on this database: one runs at a time/)
  t.notOk(answers.some((answer) => /too many clients/.test(answer.body)), 'PostgreSQL never ran out of connections')
  t.same(ownAnswers.map((answer) => answer.statusCode), Array(10).fill(200), 'the app\'s own requests were answered')
  t.equal((await post(app, url)).statusCode, 200, 'once the burst is over, EXPLAIN runs again')
})

t.test('MariaDB: 40 EXPLAINs of a slow subquery do not hold the app\'s pool; a slow one is stopped', async (t) => {
  const appPool: MysqlPool = createPool({ ...mariadb.connection, connectionLimit: 2 })
  t.teardown(async () => { await new Promise((resolve) => { appPool.end(resolve) }) })
  const app = await createKernelApp({ kernel: { debug: true } })
  t.teardown(() => app.close())
  app.get('/slow', async () => { await appPool.promise().query('SELECT s FROM (SELECT SLEEP(?) AS s) d', [0.5]); return 'ok' })
  app.get('/own', async () => { await appPool.promise().query('SELECT 1'); return 'ok' })
  app.get('/slower', async () => { await appPool.promise().query('SELECT s FROM (SELECT SLEEP(?) AS s) d', [0]); return 'ok' })
  const { token, profile } = await profiled(app, { url: '/slow' })
  const id = profile.collected.db!.statements[0]!.explain!
  t.ok(id, 'the read is offered an Explain')
  const url = `/_profiler/${token}/explain/${id}`
  const burst = Array.from({ length: 40 }, async () => await post(app, url))
  const own = Array.from({ length: 10 }, async () => await app.inject({ url: '/own', headers: { host: 'localhost' } }))
  const answers = await Promise.all(burst)
  t.same(new Set(answers.map((answer) => answer.statusCode)), new Set([200, 503]), 'each EXPLAIN is answered 200 or 503')
  t.same((await Promise.all(own)).map((answer) => answer.statusCode), Array(10).fill(200), 'the app\'s own requests through its pool are answered')

  // a slow EXPLAIN is stopped: the server by max_statement_time, the kernel by closing its connection
  const previous = setExplainTimeout(200)
  t.teardown(() => { setExplainTimeout(previous) })
  await profiled(app, { url: '/slower' })
  // the same statement, explained with a slower value than the app gave
  const entryId = explainable('SELECT s FROM (SELECT SLEEP(?) AS s) d', [3], 'mysql', { kind: 'mysql2-pool', handle: appPool, connectionClass: await mysqlConnectionClass() })
  t.ok(entryId)
  const stopped = await explain(entryId!).then(() => 'explained', (error: Error & { statusCode?: number }) => `${error.statusCode} ${error.message}`)
  t.match(stopped, /^503 EXPLAIN took longer than 200 ms and was stopped\.$/)
})

t.test('the EXPLAIN error page never quotes a value the Database panel masks', async (t) => {
  const app = await createKernelApp({ kernel: { debug: true } })
  t.teardown(() => app.close())
  app.get('/bad', async () => {
    await pool.query('SELECT id FROM members WHERE secret_code = $1', ['key-secret-7']).catch(() => undefined)
    return 'ok'
  })
  const { token, profile } = await profiled(app, { url: '/bad' })
  const statement = profile.collected.db!.statements[0]!
  t.notMatch(JSON.stringify(statement), 'key-secret-7', 'the panel masks it, the span\'s error too')
  const answer = await post(app, `/_profiler/${token}/explain/${statement.explain!}`)
  t.match(answer.body, /The database answered: invalid input syntax for type integer: &quot;\*\*\*\*\*\*&quot;/)
  t.notMatch(answer.body, 'key-secret-7', 'the error page masks it too')
})
