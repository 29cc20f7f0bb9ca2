/**
 * pg with no code from the app: every statement made through the app's own pg (imported before
 * the kernel, its pool made before the kernel too) is in its request's profile, against a real
 * PostgreSQL; pg's semantics (callbacks, promises, Query objects, cursors, rowMode, prepared
 * statements, errors) unchanged; 20 concurrent requests through a pool of 2 each get their own;
 * pg untouched in production and restored when the last profiler closes.
 */
import t from 'tap'
import pg from 'pg'
import Cursor from 'pg-cursor'
import QueryStream from 'pg-query-stream'
import { createKernelApp } from '../../../index.js'
import { profiled } from '../helpers.js'
import { TestPostgres } from '../../postgres/server.js'

const ORIGINAL = { query: pg.Client.prototype.query, connect: Object.getPrototypeOf(pg.Pool.prototype).connect as unknown, poolQuery: Object.getPrototypeOf(pg.Pool.prototype).query as unknown }
const postgres = await TestPostgres.start(t)
// made before the kernel exists, as an app's module-level pool is
const pool = new pg.Pool({ connectionString: postgres.url, max: 2 })
// teardowns run last first: the pool ends before the server stops
t.teardown(() => pool.end())
// an idle connection ended by the server's stop is no failure of the test
pool.on('error', () => {})
await pool.query('CREATE TABLE books (id int PRIMARY KEY, title text, api_key text)')
await pool.query('INSERT INTO books VALUES (1, \'Dune\', \'k-1\'), (2, \'Emma\', \'k-2\'), (3, \'Ulysses\', \'k-3\')')

t.test('every way of making a statement through pg is recorded, with its values, rows, database and failure', async (t) => {
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/books', async () => {
    const seen: unknown[] = []
    // Pool#query, text and values
    seen.push((await pool.query('SELECT title FROM books WHERE id = $1', [1])).rows[0])
    // a config object, rowMode array, a secret column
    seen.push((await pool.query({ text: 'SELECT id FROM books WHERE api_key = $1', values: ['k-2'], rowMode: 'array' })).rows[0])
    // a prepared statement, twice
    for (const id of [2, 3]) seen.push((await pool.query({ name: 'book-by-id', text: 'SELECT title FROM books WHERE id = $1', values: [id] })).rows[0])
    // a checked-out client used directly (Kysely, Knex and TypeORM do so), with a callback
    const client = await pool.connect()
    try {
      seen.push(await new Promise((resolve, reject) => {
        client.query('SELECT count(*)::int AS n FROM books WHERE id > $1', [0], (error, result) => { if (error !== null && error !== undefined) reject(error); else resolve(result.rows[0]) })
      }))
      // a Query object (a submittable) with its events
      const query = client.query(new pg.Query('SELECT id FROM books ORDER BY id'))
      seen.push(await new Promise((resolve, reject) => { const ids: number[] = []; query.on('row', (row: { id: number }) => ids.push(row.id)); query.on('end', () => resolve(ids)); query.on('error', reject) }))
      // a cursor (pg-cursor), read in two batches
      const cursor = client.query(new Cursor('SELECT id FROM books WHERE id >= $1 ORDER BY id', [1]))
      const first = await cursor.read(2)
      const second = await cursor.read(2)
      await cursor.close()
      seen.push([...first, ...second].map((row: { id: number }) => row.id))
      // a stream (pg-query-stream)
      const stream = client.query(new QueryStream('SELECT title FROM books WHERE id < $1 ORDER BY id', [3]))
      const titles: string[] = []
      for await (const row of stream) titles.push((row as { title: string }).title)
      seen.push(titles)
    } finally {
      client.release()
    }
    // a failure
    await pool.query('SELECT nope FROM nowhere').catch((error: Error) => seen.push(error.message))
    return seen
  })
  t.teardown(() => app.close())

  const { res, profile } = await profiled(app, { url: '/books' })
  t.same(res.json(), [{ title: 'Dune' }, [2], { title: 'Emma' }, { title: 'Ulysses' }, { n: 3 }, [1, 2, 3], [1, 2, 3], ['Dune', 'Emma'], 'relation "nowhere" does not exist'], 'pg answered as it does without the profiler')
  const statements = profile.collected.db!.statements
  t.same(statements.map((s) => s.statement), [
    'SELECT title FROM books WHERE id = $1',
    'SELECT id FROM books WHERE api_key = $1',
    'SELECT title FROM books WHERE id = $1',
    'SELECT title FROM books WHERE id = $1',
    'SELECT count(*)::int AS n FROM books WHERE id > $1',
    'SELECT id FROM books ORDER BY id',
    'SELECT id FROM books WHERE id >= $1 ORDER BY id',
    'SELECT title FROM books WHERE id < $1 ORDER BY id',
    'SELECT nope FROM nowhere'
  ], 'each statement once (Pool#query goes through Client#query: not twice), in order')
  t.same(statements.map((s) => s.params), [[1], ['******'], [2], [3], [0], undefined, ['1'], ['3'], undefined], 'the values, the secret column\'s masked (a cursor\'s as pg prepared them)')
  t.same(statements.map((s) => s.rows).filter((_rows, index) => index !== 6), [1, 1, 1, 1, 1, 3, 2, undefined], 'rows (pg\'s rowCount; a cursor\'s, read in batches, is not told)')
  t.same(statements.filter((s) => s.prepared !== undefined).map((s) => s.prepared), ['book-by-id', 'book-by-id'], 'the prepared statement\'s name')
  t.match(statements[8], { error: 'relation "nowhere" does not exist' })
  for (const s of statements) {
    t.match(s, { system: 'postgresql', driver: 'pg', database: 'postgres' })
    t.type(s.duration, 'number', `${s.statement}: timed`)
  }
  t.notMatch(JSON.stringify(profile), /k-2/, 'the secret value nowhere in the profile')
})

t.test('20 concurrent requests through a pool of 2 each get exactly their own statements', async (t) => {
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/mine/:n', async (request) => {
    const n = Number((request.params as { n: string }).n)
    // pg-pool hands a freed connection to the next waiting query from inside release(), in the
    // async context of the request that freed it
    await pool.query('SELECT $1::int AS mine, pg_sleep(0.002)', [n])
    await new Promise<void>((resolve, reject) => { pool.query('SELECT $1::int + 0 AS again', [n], (error) => { if (error !== null && error !== undefined) reject(error); else resolve() }) })
    return n
  })
  t.teardown(() => app.close())
  const ids = Array.from({ length: 20 }, (_value, index) => index)
  const results = await Promise.all(ids.map((n) => profiled(app, { url: `/mine/${n}` })))
  for (const [n, { profile }] of results.entries()) {
    t.same(profile.collected.db!.statements.map((s) => s.params), [[n], [n]], `request ${n}: its own two statements`)
  }
})

t.test('production and profiler: false never touch pg; the last profiler to close restores it', async (t) => {
  const production = await createKernelApp({ kernel: { debug: false } })
  const off = await createKernelApp({ kernel: { debug: true, profiler: false } })
  t.equal(pg.Client.prototype.query, ORIGINAL.query, 'Client#query is the original')
  t.equal(Object.getPrototypeOf(pg.Pool.prototype).connect, ORIGINAL.connect, 'Pool#connect is the original')
  t.equal(Object.getPrototypeOf(pg.Pool.prototype).query, ORIGINAL.poolQuery, 'Pool#query is the original')
  await production.close()
  await off.close()

  const one = await createKernelApp({ kernel: { debug: true } })
  const two = await createKernelApp({ kernel: { debug: true } })
  t.not(pg.Client.prototype.query, ORIGINAL.query, 'instrumented while a profiler is alive')
  t.not(Object.getPrototypeOf(pg.Pool.prototype).query, ORIGINAL.poolQuery, 'Pool#query too')
  await one.close()
  t.not(pg.Client.prototype.query, ORIGINAL.query, 'still, while another one is')
  await two.close()
  t.equal(pg.Client.prototype.query, ORIGINAL.query, 'Client#query restored')
  t.equal(Object.getPrototypeOf(pg.Pool.prototype).connect, ORIGINAL.connect, 'Pool#connect restored')
  t.equal(Object.getPrototypeOf(pg.Pool.prototype).query, ORIGINAL.poolQuery, 'Pool#query restored')
  t.notOk(Object.prototype.hasOwnProperty.call(pg.Pool.prototype, 'connect') || Object.prototype.hasOwnProperty.call(pg.Pool.prototype, 'query'), 'nothing left on pg\'s own Pool')
})
