/**
 * The Database panel against a real MariaDB (mysql2 publishes its statements), and the kernel's
 * own channel for a driver the profiler does not see (as the docs show). pg: pg.test.ts.
 */
import t from 'tap'
import { tracingChannel } from 'node:diagnostics_channel'
import { createConnection, createPool } from 'mysql2/promise'
import mysqlCallbacks from 'mysql2'
import { createKernelApp } from '../../../index.js'
import { page, profiled } from '../helpers.js'
import { TestMariaDb } from '../../mariadb/server.js'

const mariadb = await TestMariaDb.start(t)
const setup = await createConnection(mariadb.connection)
await setup.query('CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(100), password_hash VARCHAR(100))')
await setup.query('CREATE TABLE tokens (user_id INT, api_token VARCHAR(100))')
await setup.query('INSERT INTO users VALUES (1, \'ada\', NULL), (2, \'bob\', NULL), (3, \'cy\', NULL), (4, \'di\', NULL)')
await setup.end()

t.test('a user with only mysql2 sees their statements: parameters masked by column, rows, errors, identical and N+1 statements', async (t) => {
  const pool = createPool({ ...mariadb.connection, connectionLimit: 2 })
  // nothing but the kernel, registered as the README says
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/users', async () => {
    const names: string[] = []
    for (const id of [1, 2, 3, 4]) {
      const [rows] = await pool.execute('SELECT name FROM users WHERE id = ?', [id])
      names.push((rows as Array<{ name: string }>)[0]!.name)
    }
    await pool.query('SELECT COUNT(*) AS n FROM users')
    await pool.query('SELECT COUNT(*) AS n FROM users')
    await pool.query('UPDATE users SET password_hash = ? WHERE id = ?', ['hunter2', 1])
    await pool.execute('INSERT INTO tokens (user_id, api_token) VALUES (?, ?)', [1, 'tok-s3cret'])
    await pool.query('SELEC broken').catch(() => names.push('failed'))
    return names
  })
  t.teardown(async () => { await app.close(); await pool.end() })
  const { profile, res, token } = await profiled(app, { url: '/users' })
  t.same(res.json(), ['ada', 'bob', 'cy', 'di', 'failed'])
  const statements = profile.collected.db!.statements
  t.same(statements.map((s) => s.statement), [
    ...Array(4).fill('SELECT name FROM users WHERE id = ?'),
    'SELECT COUNT(*) AS n FROM users',
    'SELECT COUNT(*) AS n FROM users',
    'UPDATE users SET password_hash = \'******\' WHERE id = 1',
    'INSERT INTO tokens (user_id, api_token) VALUES (?, ?)',
    'SELEC broken'
  ], 'every statement, in order; the secret value the driver put into the statement masked by its column')
  t.same(statements.slice(0, 4).map((s) => s.params), [[1], [2], [3], [4]], 'positional parameters shown')
  t.same(statements[7].params, [1, '******'], 'a parameter for a secret column masked')
  t.equal(statements[6].params, undefined, 'query() put its values into the statement: not repeated')
  t.same(statements.slice(0, 4).map((s) => s.rows), [1, 1, 1, 1], 'rows')
  t.equal(statements[6].rows, 1, 'affected rows')
  t.match(statements[8].error, /SQL syntax/, 'the failure')
  for (const s of statements) {
    t.equal(s.system, 'mysql')
    t.equal(s.driver, 'mysql2')
    t.equal(s.database, 'test')
    t.type(s.duration, 'number')
  }
  t.notMatch(JSON.stringify(profile), /hunter2|tok-s3cret/, 'no secret anywhere in the profile')

  const panel = await page(app, `/_profiler/${token}?panel=db`)
  t.equal(panel.statusCode, 200)
  t.match(panel.body, /<table id="n-plus-one">[\s\S]*?<td>4<\/td><td>4<\/td>[\s\S]*?SELECT name FROM users WHERE id &#x3D; \?/, 'the repeated shape flagged as a likely N+1')
  t.equal(panel.body.match(/data-n-plus-one>likely N\+1: 4 of this shape/g)?.length, 4, 'on each of its statements')
  t.equal(panel.body.match(/identical ×2/g)?.length, 2, 'identical statements marked')
  // grouped by shape (changed on purpose: one row for the four lookups, not four rows of one statement)
  const groups = /<table id="db-groups">[\s\S]*?<\/table>/.exec(panel.body)![0]
  t.equal(groups.match(/SELECT name FROM users WHERE id &#x3D; \?/g)?.length, 1, 'the four lookups are one group')
  t.match(groups, /<tr class="row-warning"><td class="num" data-count>4<\/td><td class="num">4<\/td><td class="mono num">[\d.]+<\/td><td><pre class="sql">SELECT name FROM users WHERE id &#x3D; \?<\/pre>/, 'with their count and their parameter sets')
  t.match(groups, /<tr class="row-warning"><td class="num" data-count>2<\/td><td class="num">1<\/td><td class="mono num">[\d.]+<\/td><td><pre class="sql">SELECT COUNT\(<wbr>\*\) AS n FROM users<\/pre>/, 'identical statements too (a soft break after the parenthesis)')
  t.equal(groups.match(/<tr/g)?.length, 6, 'a row per shape (the header, and five shapes)')
  t.notMatch(panel.body, /n-plus-one[^]*COUNT\(\*\)[^]*<\/table>[^]*Statements/, 'identical statements are no N+1')
  // changed on purpose: the count the toolbar shows (9), red for the failure (it said 1, the failures)
  t.match(panel.body, /data-panel="db" class="active"><span>Database<\/span><span class="badge badge-error">9<\/span>/, 'the statements in the menu, red for the failure')
  const toolbar = await page(app, `/_wdt/${token}`)
  t.match(toolbar.body, /data-kwdt="db">[\s\S]*?kwdt-badge kwdt-badge-error" data-kwdt-count>9</, 'the toolbar item: 9 statements, highlighted for the failure')
  t.match(toolbar.body, /data-kwdt-n-plus-one>1</, 'and the N+1 told')
})

t.test('slow statements and the toolbar threshold; the callback API; a hostile statement escaped', async (t) => {
  const connection = mysqlCallbacks.createConnection(mariadb.connection)
  const app = await createKernelApp({ kernel: { debug: true, profiler: { thresholds: { db: 0, slow_statement: 0 } } } })
  app.get('/hostile', async () => {
    await new Promise<void>((resolve, reject) => {
      connection.query('SELECT \'<script>alert(1)</script>\' AS x, SLEEP(0) AS s', (error) => { if (error !== null) reject(error); else resolve() })
    })
    return 'ok'
  })
  t.teardown(async () => { await app.close(); connection.end() })
  const { token, profile } = await profiled(app, { url: '/hostile' })
  t.same(profile.collected.db!.statements.map((s) => s.statement), ['SELECT \'<script>alert(1)</script>\' AS x, SLEEP(0) AS s'], 'the callback API is traced too')
  const panel = await page(app, `/_profiler/${token}?panel=db`)
  t.notMatch(panel.body, '<script>alert(1)')
  t.match(panel.body, '&lt;script&gt;alert(1)&lt;/script&gt;')
  t.match(panel.body, '<span class="flag">slow</span>', 'at or above slow_statement')
  const toolbar = await page(app, `/_wdt/${token}`)
  t.match(toolbar.body, /data-kwdt="db">[\s\S]*?kwdt-badge kwdt-badge-warning" data-kwdt-count>1</, 'above the db threshold')
  t.notMatch(toolbar.body, '<script>alert(1)')
})

t.test('30 concurrent requests through a pool of 2 connections get exactly their own statements', async (t) => {
  const pool = createPool({ ...mariadb.connection, connectionLimit: 2 })
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/mine/:id', async (request) => {
    const id = Number((request.params as { id: string }).id)
    await pool.query('SELECT ? AS mine', [id])
    await pool.execute('SELECT ? + 0 AS again', [id])
    return id
  })
  t.teardown(async () => { await app.close(); await pool.end() })
  const ids = Array.from({ length: 30 }, (_value, index) => index)
  const results = await Promise.all(ids.map((id) => profiled(app, { url: `/mine/${id}` })))
  for (const [index, { profile }] of results.entries()) {
    const statements = profile.collected.db!.statements
    t.same(statements.map((s) => s.statement), [`SELECT ${index} AS mine`, 'SELECT ? + 0 AS again'], `request ${index}: its own statements`)
    t.same(statements[1].params, [index])
  }
})

t.test('a driver the profiler does not see: a few lines publish on the kernel\'s channel', async (t) => {
  // a stand-in for such a driver (postgres.js, mssql, oracledb…): an async run(text, values)
  const db = {
    async run (text: string, values?: unknown[]): Promise<{ rowCount: number }> {
      if (text.includes('nowhere')) throw new Error('relation "nowhere" does not exist')
      return { rowCount: values === undefined ? 0 : values.length / 2 }
    }
  }
  // the docs' example, as written there
  const sql = tracingChannel('fastify-kernel:db:query')
  const run = (text: string, values?: unknown[]) => sql.tracePromise(() => db.run(text, values), { query: text, values, system: 'mssql', driver: 'mssql' })

  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/other', async () => {
    await run('INSERT INTO accounts (id, secret_key) VALUES (?, ?), (?, ?)', [1, 'sk-1', 2, 'sk-2'])
    await run('SELECT nope FROM nowhere').catch(() => undefined)
    return 'ok'
  })
  t.teardown(async () => { await app.close() })
  const { profile } = await profiled(app, { url: '/other' })
  const statements = profile.collected.db!.statements
  t.same(statements.map((s) => [s.system, s.driver]), Array(2).fill(['mssql', 'mssql']))
  t.equal(statements[0].rows, 2, 'the result\'s rowCount')
  t.match(statements[1].error, /relation "nowhere" does not exist/)
  t.notMatch(JSON.stringify(profile), /sk-1|sk-2/)
})
