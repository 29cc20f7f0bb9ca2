/**
 * Knex on mysql2 against a real MariaDB keeps being seen (mysql2 publishes its own channels):
 * its statements, with their values, in the request's profile.
 */
import t from 'tap'
import knex from 'knex'
import { createKernelApp } from '../../../index.js'
import { profiled } from '../../profiler/helpers.js'
import { TestMariaDb } from '../../mariadb/server.js'

const mariadb = await TestMariaDb.start(t)
const db = knex({ client: 'mysql2', connection: mariadb.connection })
t.teardown(() => db.destroy())
await db.schema.createTable('authors', (table) => { table.integer('id').primary(); table.string('name'); table.string('api_key') })
await db('authors').insert([{ id: 1, name: 'Le Guin', api_key: 'key-1' }])

t.test('Knex (mysql2)', async (t) => {
  const app = await createKernelApp({ kernel: { debug: true } })
  t.teardown(() => app.close())
  app.get('/authors', async () => {
    await db('authors').insert({ id: 2, name: 'Calvino', api_key: 's3cret-m' })
    return await db('authors').select('name').where({ id: 1 })
  })
  const { res, profile } = await profiled(app, { url: '/authors' })
  t.same(res.json(), [{ name: 'Le Guin' }])
  const statements = profile.collected.db!.statements
  t.same(statements.map((s) => [s.statement, s.params]), [
    ['insert into `authors` (`api_key`, `id`, `name`) values (\'******\', 2, \'Calvino\')', undefined],
    ['select `name` from `authors` where `id` = 1', undefined]
  ], 'mysql2\'s query() writes the values in: shown there, the secret column\'s masked')
  for (const s of statements) t.match(s, { system: 'mysql', driver: 'mysql2', database: 'test' })
  t.notMatch(JSON.stringify(profile), /s3cret/)
})
