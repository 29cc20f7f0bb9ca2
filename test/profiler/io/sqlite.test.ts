/**
 * SQLite with no code from the app: better-sqlite3's statements (run, get, all, iterate, bound
 * values, exec) in the request's profile, with their values and rows; better-sqlite3 untouched
 * in production and restored after the last profiler. `node:sqlite` is not in Node 20: a Node
 * whose `node:sqlite` publishes `sqlite.db.query` (26) is heard on it (the channel is fed here as
 * it would be, and the real one on Node 26), Node 22 and 24's DatabaseSync is instrumented (run
 * on each line: `bash .ci/node-line.sh 22 npx tap test/profiler/io/sqlite.test.ts`).
 */
import t from 'tap'
import { channel } from 'node:diagnostics_channel'
import { isBuiltin } from 'node:module'
import Database from 'better-sqlite3'
import { createKernelApp } from '../../../index.js'
import { profiled } from '../helpers.js'
import { hasNodeSqlite } from '../../../src/profiler/panels/db/sqlite.js'

// opened before the kernel exists, its statements prepared then too
const db = new Database(':memory:')
db.exec('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, password TEXT)')
const insert = db.prepare('INSERT INTO users (id, name, password) VALUES (@id, @name, @password)')
for (const [id, name] of [[1, 'ada'], [2, 'bob'], [3, 'cy']] as const) insert.run({ id, name, password: `pw-${id}` })
const Statement = Object.getPrototypeOf(db.prepare('SELECT 1')) as Record<string, unknown>
const ORIGINAL = { run: Statement.run, all: Statement.all, exec: Database.prototype.exec }

t.test('every statement of better-sqlite3, prepared before the kernel or during the request', async (t) => {
  const app = await createKernelApp({ kernel: { debug: true } })
  t.teardown(() => app.close())
  const byId = db.prepare('SELECT name FROM users WHERE id = ?')
  app.get('/users', async () => {
    const names = [1, 2].map((id) => (byId.get(id) as { name: string }).name)
    insert.run({ id: 4, name: 'di', password: 'hunter2' })
    const all = db.prepare('SELECT id FROM users WHERE id > ? AND name <> $name').all({ name: 'bob' }, 0) as Array<{ id: number }>
    const iterated = [...db.prepare('SELECT id FROM users ORDER BY id').iterate()].length
    const bound = db.prepare('SELECT count(*) AS n FROM users WHERE id < ?').bind(3)
    const count = (bound.get() as { n: number }).n
    db.exec('CREATE TEMP TABLE scratch (x)')
    let failure = ''
    try { db.prepare('SELECT nope FROM users').all() } catch (error) { failure = (error as Error).message }
    return { names, all: all.length, iterated, count, failure }
  })
  const { res, profile } = await profiled(app, { url: '/users' })
  t.same(res.json(), { names: ['ada', 'bob'], all: 3, iterated: 4, count: 2, failure: 'no such column: nope' })
  const statements = profile.collected.db!.statements
  t.same(statements.map((s) => [s.statement, s.params, s.rows]), [
    ['SELECT name FROM users WHERE id = ?', [1], 1],
    ['SELECT name FROM users WHERE id = ?', [2], 1],
    ['INSERT INTO users (id, name, password) VALUES (@id, @name, @password)', { id: 4, name: 'di', password: '******' }, 1],
    ['SELECT id FROM users WHERE id > ? AND name <> $name', { 1: 0, name: 'bob' }, 3],
    ['SELECT id FROM users ORDER BY id', undefined, 4],
    ['SELECT count(*) AS n FROM users WHERE id < ?', [3], 1],
    ['CREATE TEMP TABLE scratch (x)', undefined, undefined]
  ], 'each statement with its values (a secret column\'s masked) and rows; the failing prepare() is no statement run')
  for (const s of statements) t.match(s, { system: 'sqlite', driver: 'better-sqlite3', database: ':memory:' })
  t.notMatch(JSON.stringify(profile), /hunter2/)
  t.equal(statements[3].runnable, 'SELECT id FROM users WHERE id > 0 AND name <> \'bob\'', 'the runnable form, SQLite\'s numbered and named parameters written in')
})

t.test('production never touches better-sqlite3; the last profiler to close restores it', async (t) => {
  const production = await createKernelApp({ kernel: { debug: false } })
  t.equal(Statement.run, ORIGINAL.run)
  t.equal(Database.prototype.exec, ORIGINAL.exec)
  await production.close()
  const app = await createKernelApp({ kernel: { debug: true } })
  t.not(Statement.all, ORIGINAL.all, 'instrumented while a profiler is alive')
  await app.close()
  t.same([Statement.run, Statement.all, Database.prototype.exec], [ORIGINAL.run, ORIGINAL.all, ORIGINAL.exec], 'restored')
})

t.test('node:sqlite: not in Node 20; its sqlite.db.query channel is heard where a Node publishes it', async (t) => {
  t.equal(hasNodeSqlite, isBuiltin('node:sqlite'))
  if (process.versions.node.startsWith('20.')) t.notOk(hasNodeSqlite, 'Node 20 has no node:sqlite')
  const app = await createKernelApp({ kernel: { debug: true } })
  t.teardown(() => app.close())
  app.get('/traced', async () => {
    // what DatabaseSync's trace publishes: the statement as SQLite ran it, values written in
    channel('sqlite.db.query').publish({ sql: 'SELECT * FROM users WHERE password = \'pw-1\'', database: 'app.db' })
    return 'ok'
  })
  const { profile } = await profiled(app, { url: '/traced' })
  t.match(profile.collected.db!.statements, [{ statement: 'SELECT * FROM users WHERE password = \'******\'', system: 'sqlite', driver: 'node:sqlite', database: 'app.db' }])
})

t.test('node:sqlite\'s DatabaseSync on every Node line that has it: instrumented before Node 26, heard on its channel from 26, each statement once', { skip: hasNodeSqlite ? false : 'no node:sqlite on this Node line' }, async (t) => {
  const app = await createKernelApp({ kernel: { debug: true } })
  t.teardown(() => app.close())
  // loaded by the app after the kernel started (found at the next unit's start)
  const sqlite = await import('node:sqlite' as string) as { DatabaseSync: new (path: string) => NodeDatabase, StatementSync: { prototype: Record<string, unknown> } }
  interface NodeDatabase { exec: (sql: string) => void, prepare: (sql: string) => { run: (...a: unknown[]) => unknown, get: (...a: unknown[]) => unknown, all: (...a: unknown[]) => unknown[], iterate: (...a: unknown[]) => Iterable<unknown> }, close: () => void }
  const ORIGINAL_RUN = sqlite.StatementSync.prototype.run
  const nodeDb = new sqlite.DatabaseSync(':memory:')
  t.teardown(() => nodeDb.close())
  nodeDb.exec('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, password TEXT)')
  app.get('/users', async () => {
    nodeDb.prepare('INSERT INTO users (id, name, password) VALUES (?, ?, ?)').run(1, 'ada', 'hunter2')
    const one = nodeDb.prepare('SELECT name FROM users WHERE id = ?').get(1) as { name: string }
    const all = nodeDb.prepare('SELECT id FROM users WHERE name = $name').all({ $name: 'ada' })
    const iterated = [...nodeDb.prepare('SELECT id FROM users').iterate()].length
    nodeDb.exec('CREATE TEMP TABLE scratch (x)')
    return { name: one.name, all: all.length, iterated }
  })
  await app.inject({ url: '/warm', headers: { host: 'example.test' } })
  const { res, profile } = await profiled(app, { url: '/users' })
  t.same(res.json(), { name: 'ada', all: 1, iterated: 1 })
  const statements = profile.collected.db!.statements
  const major = Number(process.versions.node.split('.')[0])
  if (major >= 26) {
    // SQLite's own trace: the statements as it ran them, values written in, no time of their own
    t.match(statements.map((s) => s.statement), [
      /^INSERT INTO users \(id, name, password\) VALUES \(1(\.0)?, 'ada', '\*\*\*\*\*\*'\)$/,
      /^SELECT name FROM users WHERE id = 1(\.0)?$/,
      'SELECT id FROM users WHERE name = \'ada\'',
      'SELECT id FROM users',
      'CREATE TEMP TABLE scratch (x)'
    ], 'Node 26+: each statement once, from the channel')
    t.equal(statements.length, 5, 'never twice')
    t.equal(sqlite.StatementSync.prototype.run, ORIGINAL_RUN, 'and StatementSync left as it is')
  } else {
    t.same(statements.map((s) => [s.statement, s.params, s.rows]), [
      ['INSERT INTO users (id, name, password) VALUES (?, ?, ?)', [1, 'ada', '******'], 1],
      ['SELECT name FROM users WHERE id = ?', [1], 1],
      ['SELECT id FROM users WHERE name = $name', { $name: 'ada' }, 1],
      ['SELECT id FROM users', undefined, 1],
      ['CREATE TEMP TABLE scratch (x)', undefined, undefined]
    ], `Node ${major}: each statement once, with its values (a secret column's masked), rows and time`)
    t.ok(statements.every((s) => typeof s.duration === 'number'), 'timed')
    t.not(sqlite.StatementSync.prototype.run, ORIGINAL_RUN, 'StatementSync instrumented')
  }
  for (const s of statements) t.match(s, { system: 'sqlite', driver: 'node:sqlite' })
  if (major < 26) for (const s of statements) t.equal(s.database, ':memory:')
  t.notMatch(JSON.stringify(profile), /hunter2/)
  await app.close()
  t.equal(sqlite.StatementSync.prototype.run, ORIGINAL_RUN, 'the last profiler closed: StatementSync is its own again')
})
