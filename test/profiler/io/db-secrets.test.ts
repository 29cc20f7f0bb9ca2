/**
 * Passwords in SQL statements: SET PASSWORD, ALTER/CREATE USER|ROLE … PASSWORD, IDENTIFIED …
 * BY|AS|USING, PASSWORD('…'), as literals and as parameters, form by form; then against a real
 * MariaDB (mysql2) and a real PostgreSQL (pg on the kernel's channel): no password reaches the
 * Database panel, the timeline, the toolbar or the stored profile, nor a server's error message.
 */
import t from 'tap'
import { createConnection } from 'mysql2/promise'
import pg from 'pg'
import { createKernelApp } from '../../../index.js'
import { page, profiled } from '../helpers.js'
import { TestMariaDb } from '../../mariadb/server.js'
import { TestPostgres } from '../../postgres/server.js'
import { formatDbSpan } from '../../../src/profiler/panels/db/capture.js'
import type { DbSpanData } from '../../../src/profiler/panels/db/capture.js'
import { Redactor } from '../../../src/http/redact.js'
import type { Span } from '../../../src/profiler/spans.js'

const M = '\'******\''
/** every password below contains it: found anywhere, a password leaked */
const MARK = 'zz-pw'

/** [system, statement, params, statement shown, params shown] */
const forms: Array<[string, string, unknown[] | undefined, string, unknown[] | undefined]> = [
  // MySQL and MariaDB
  ['mysql', 'SET PASSWORD = PASSWORD(\'zz-pw1\')', undefined, `SET PASSWORD = PASSWORD(${M})`, undefined],
  ['mysql', 'SET PASSWORD FOR \'ada\'@\'%\' = PASSWORD("zz-pw2")', undefined, `SET PASSWORD FOR 'ada'@'%' = PASSWORD(${M})`, undefined],
  ['mysql', 'SET PASSWORD FOR ada@localhost = \'zz-pw3\'', undefined, `SET PASSWORD FOR ada@localhost = ${M}`, undefined],
  ['mysql', 'SET PASSWORD FOR \'ada\'@\'%\' = ?', ['zz-pw4'], 'SET PASSWORD FOR \'ada\'@\'%\' = ?', ['******']],
  ['mysql', 'SET PASSWORD FOR ada = \'zz-pw5\' REPLACE \'zz-pw-old\' RETAIN CURRENT PASSWORD', undefined, `SET PASSWORD FOR ada = ${M} REPLACE ${M} RETAIN CURRENT PASSWORD`, undefined],
  ['mysql', 'SET PASSWORD = OLD_PASSWORD(CONCAT(\'zz\', ?))', ['-pw6'], `SET PASSWORD = OLD_PASSWORD(CONCAT(${M}, ?))`, ['******']],
  ['mysql', 'ALTER USER \'ada\'@\'%\' IDENTIFIED BY \'zz-pw7\'', undefined, `ALTER USER 'ada'@'%' IDENTIFIED BY ${M}`, undefined],
  ['mysql', 'ALTER USER ada IDENTIFIED WITH mysql_native_password BY \'zz-pw8\'', undefined, `ALTER USER ada IDENTIFIED WITH mysql_native_password BY ${M}`, undefined],
  ['mysql', 'CREATE USER ada IDENTIFIED WITH \'caching_sha2_password\' AS \'$A$005$zz-pw9\'', undefined, `CREATE USER ada IDENTIFIED WITH 'caching_sha2_password' AS ${M}`, undefined],
  ['mysql', 'CREATE USER ada IDENTIFIED BY PASSWORD \'*zz-pw10\'', undefined, `CREATE USER ada IDENTIFIED BY PASSWORD ${M}`, undefined],
  ['mariadb', 'CREATE USER ada IDENTIFIED VIA ed25519 USING PASSWORD(\'zz-pw11\') OR unix_socket', undefined, `CREATE USER ada IDENTIFIED VIA ed25519 USING PASSWORD(${M}) OR unix_socket`, undefined],
  ['mariadb', 'ALTER USER ada IDENTIFIED VIA mysql_native_password USING \'*zz-pw12\'', undefined, `ALTER USER ada IDENTIFIED VIA mysql_native_password USING ${M}`, undefined],
  ['mariadb', 'GRANT SELECT ON test.* TO ada IDENTIFIED BY \'zz-pw13\'', undefined, `GRANT SELECT ON test.* TO ada IDENTIFIED BY ${M}`, undefined],
  ['mysql', 'ALTER USER ada IDENTIFIED BY ? REPLACE ?', ['zz-pw14', 'zz-pw-old'], 'ALTER USER ada IDENTIFIED BY ? REPLACE ?', ['******', '******']],
  ['mysql', 'CREATE USER ada IDENTIFIED BY _utf8mb4\'zz-pw15\'', undefined, `CREATE USER ada IDENTIFIED BY ${M}`, undefined],
  ['mysql', 'SELECT PASSWORD(?) AS hash, ? AS name', ['zz-pw16', 'ada'], 'SELECT PASSWORD(?) AS hash, ? AS name', ['******', 'ada']],
  ['mysql', 'ALTER USER ada PASSWORD EXPIRE INTERVAL 90 DAY; SELECT \'kept\'', undefined, 'ALTER USER ada PASSWORD EXPIRE INTERVAL 90 DAY; SELECT \'kept\'', undefined],
  ['mysql', 'SET PASSWORD = \'zz-pw17\'; SELECT \'kept\' = ?', ['kept too'], `SET PASSWORD = ${M}; SELECT 'kept' = ?`, ['kept too']],
  // PostgreSQL
  ['postgresql', 'ALTER USER ada WITH PASSWORD \'zz-pw20\'', undefined, `ALTER USER ada WITH PASSWORD ${M}`, undefined],
  ['postgresql', 'ALTER ROLE ada PASSWORD \'zz-pw21\' VALID UNTIL \'2030-01-01\'', undefined, `ALTER ROLE ada PASSWORD ${M} VALID UNTIL '2030-01-01'`, undefined],
  ['postgresql', 'CREATE USER ada WITH LOGIN PASSWORD \'zz-pw22\'', undefined, `CREATE USER ada WITH LOGIN PASSWORD ${M}`, undefined],
  ['postgresql', 'CREATE ROLE ada ENCRYPTED PASSWORD \'zz-pw23\' CREATEDB', undefined, `CREATE ROLE ada ENCRYPTED PASSWORD ${M} CREATEDB`, undefined],
  ['postgresql', 'CREATE ROLE ada PASSWORD $$zz-pw24$$', undefined, `CREATE ROLE ada PASSWORD ${M}`, undefined],
  ['postgresql', 'ALTER USER ada PASSWORD $body$zz-pw25 $ and \'$body$ LOGIN', undefined, `ALTER USER ada PASSWORD ${M} LOGIN`, undefined],
  ['postgresql', 'ALTER ROLE ada PASSWORD E\'zz-pw26\\\'s\'', undefined, `ALTER ROLE ada PASSWORD ${M}`, undefined],
  ['postgresql', 'ALTER ROLE ada WITH PASSWORD U&\'zz-pw27\'', undefined, `ALTER ROLE ada WITH PASSWORD ${M}`, undefined],
  ['postgresql', 'CREATE USER MAPPING FOR ada SERVER films OPTIONS (user \'ada\', password \'zz-pw28\')', undefined, `CREATE USER MAPPING FOR ada SERVER films OPTIONS (user 'ada', password ${M})`, undefined],
  ['postgresql', 'ALTER USER ada WITH PASSWORD $1', ['zz-pw29'], 'ALTER USER ada WITH PASSWORD $1', ['******']],
  ['postgresql', 'ALTER USER ada PASSWORD NULL', undefined, 'ALTER USER ada PASSWORD NULL', undefined],
  ['postgresql', 'SELECT $1::text AS note, $$kept$$ AS body', ['kept'], 'SELECT $1::text AS note, $$kept$$ AS body', ['kept']]
]

t.test('each form: the password masked as a literal and as a parameter, everything else kept', async (t) => {
  const redactor = new Redactor()
  for (const [system, statement, params, shown, shownParams] of forms) {
    const span: Span = { kind: 'db', name: 'db', start: 0, duration: 1, data: { system, statement, ...(params === undefined ? {} : { params }) } }
    formatDbSpan(span, redactor)
    const data = span.data as unknown as DbSpanData
    t.equal(data.statement, shown, `${system}: ${statement}`)
    t.same(data.params, shownParams, `${system}: ${statement}: parameters`)
    t.equal(span.name, shown, 'the span\'s name (the timeline\'s) too')
    t.notMatch(JSON.stringify(span), MARK)
  }
})

t.test('a server\'s error message loses the password it quotes', async (t) => {
  const span: Span = { kind: 'db', name: 'db', start: 0, duration: 1, error: 'You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near \'\'zz-pw30\' NOPE\' at line 1', data: { system: 'mysql', statement: 'CREATE USER ada IDENTIFIED BY \'zz-pw30\' NOPE' } }
  formatDbSpan(span, new Redactor())
  t.equal(span.error, 'You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near \'****** NOPE\' at line 1')
  const param: Span = { kind: 'db', name: 'db', start: 0, duration: 1, error: 'syntax error at or near "zz-pw31"', data: { system: 'postgresql', statement: 'ALTER USER ada PASSWORD $1', params: ['zz-pw31'] } }
  formatDbSpan(param, new Redactor())
  t.equal(param.error, 'syntax error at or near "******"')
})

t.test('MariaDB through mysql2: users created and changed, no password shown anywhere', async (t) => {
  const mariadb = await TestMariaDb.start(t)
  const connection = await createConnection(mariadb.connection)
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/users', async () => {
    const run = async (sql: string, values?: unknown[]): Promise<void> => { await connection.query(sql, values).catch(() => undefined) }
    await run('CREATE USER \'probe\'@\'%\' IDENTIFIED BY \'zz-pw-create\'')
    await run('ALTER USER \'probe\'@\'%\' IDENTIFIED BY ?', ['zz-pw-interpolated'])
    await run('ALTER USER \'probe\'@\'%\' IDENTIFIED VIA mysql_native_password USING PASSWORD(\'zz-pw-via\')')
    await run('SET PASSWORD FOR \'probe\'@\'%\' = PASSWORD(\'zz-pw-set\')')
    await run('SET PASSWORD FOR \'probe\'@\'%\' = \'zz-pw-plain\'')
    await run('CREATE USR \'probe\'@\'%\' IDENTIFIED BY \'zz-pw-typo\'')
    await connection.execute('SELECT PASSWORD(?) AS hash', ['zz-pw-prepared'])
    await run('DROP USER \'probe\'@\'%\'')
    return 'ok'
  })
  t.teardown(async () => { await app.close(); await connection.end() })
  const { profile, token } = await profiled(app, { url: '/users' })
  const statements = profile.collected.db!.statements
  t.same(statements.map((s) => s.statement), [
    `CREATE USER 'probe'@'%' IDENTIFIED BY ${M}`,
    `ALTER USER 'probe'@'%' IDENTIFIED BY ${M}`,
    `ALTER USER 'probe'@'%' IDENTIFIED VIA mysql_native_password USING PASSWORD(${M})`,
    `SET PASSWORD FOR 'probe'@'%' = PASSWORD(${M})`,
    `SET PASSWORD FOR 'probe'@'%' = ${M}`,
    `CREATE USR 'probe'@'%' IDENTIFIED BY ${M}`,
    'SELECT PASSWORD(?) AS hash',
    'DROP USER \'probe\'@\'%\''
  ])
  t.same(statements[6].params, ['******'], 'a prepared statement\'s parameter')
  t.same(statements.map((s) => s.error === undefined), [true, true, true, true, false, false, true, true], 'the server ran them, but for the plain password (it wants a hash) and the typo')
  t.equal(statements[4].error, 'Password hash should be a 41-digit hexadecimal number')
  t.match(statements[5].error, /near 'USR 'probe'@'%' IDENTIFIED BY \*\*\*\*\*\*' at line 1/, 'a syntax error quoting the password')
  t.notMatch(JSON.stringify(profile), MARK, 'no password anywhere in the profile')
  for (const panel of ['db', 'time']) {
    const body = (await page(app, `/_profiler/${token}?panel=${panel}`)).body
    t.match(body, 'IDENTIFIED BY &#x27;******&#x27;', `the ${panel} panel shows the statements`)
    t.notMatch(body, MARK, `the ${panel} panel`)
  }
  t.notMatch((await page(app, `/_wdt/${token}`)).body, MARK, 'the toolbar')
})

t.test('PostgreSQL through pg (seen with no code): roles created and changed, no password shown anywhere', async (t) => {
  const postgres = await TestPostgres.start(t)
  const pool = new pg.Pool({ connectionString: postgres.url })
  pool.on('error', () => undefined)
  const query = async (text: string, values?: unknown[]): Promise<unknown> => await pool.query(text, values)
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/roles', async () => {
    const run = async (text: string, values?: unknown[]): Promise<void> => { await query(text, values).catch(() => undefined) }
    await run('CREATE ROLE probe WITH LOGIN PASSWORD \'zz-pw-create\'')
    await run('ALTER ROLE probe PASSWORD $$zz-pw-dollar$$ VALID UNTIL \'infinity\'')
    await run('ALTER USER probe WITH ENCRYPTED PASSWORD E\'zz-pw-e\\\'s\'')
    await run('CREATE USER probe2 PASSWORD \'zz-pw-user\'')
    await run('ALTER USER probe PASSWORD $1', ['zz-pw-param'])
    await run('DROP ROLE probe, probe2')
    return 'ok'
  })
  t.teardown(async () => { await app.close(); await pool.end() })
  const { profile, token } = await profiled(app, { url: '/roles' })
  const statements = profile.collected.db!.statements
  t.same(statements.map((s) => s.statement), [
    `CREATE ROLE probe WITH LOGIN PASSWORD ${M}`,
    `ALTER ROLE probe PASSWORD ${M} VALID UNTIL 'infinity'`,
    `ALTER USER probe WITH ENCRYPTED PASSWORD ${M}`,
    `CREATE USER probe2 PASSWORD ${M}`,
    'ALTER USER probe PASSWORD $1',
    'DROP ROLE probe, probe2'
  ])
  t.same(statements.map((s) => s.error), [undefined, undefined, undefined, undefined, 'syntax error at or near "$1"', undefined], 'the server ran them (a parameter it refuses in a utility statement)')
  t.same(statements[4].params, ['******'])
  t.notMatch(JSON.stringify(profile), MARK, 'no password anywhere in the profile')
  for (const panel of ['db', 'time']) {
    const body = (await page(app, `/_profiler/${token}?panel=${panel}`)).body
    t.match(body, 'PASSWORD &#x27;******&#x27;', `the ${panel} panel shows the statements`)
    t.notMatch(body, MARK, `the ${panel} panel`)
  }
  t.notMatch((await page(app, `/_wdt/${token}`)).body, MARK, 'the toolbar')
})
