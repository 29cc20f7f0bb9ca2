/**
 * The ORMs and query builders on pg, seen with no code of the app's: Drizzle, Kysely, Knex,
 * TypeORM and Sequelize against one real PostgreSQL, each making statements in a route; each
 * request's profile has them, with their values (a secret column's masked). Prisma 7 is not
 * here: `prisma generate` downloads its schema engine from outside the npm registry (see
 * docs/development.md).
 */
import 'reflect-metadata'
import t from 'tap'
import type { Test } from 'tap'
import pg from 'pg'
import { drizzle } from 'drizzle-orm/node-postgres'
import { eq } from 'drizzle-orm'
import { integer, pgTable, text } from 'drizzle-orm/pg-core'
import { Kysely, PostgresDialect } from 'kysely'
import knex from 'knex'
import { DataSource, EntitySchema } from 'typeorm'
import { DataTypes, Sequelize } from 'sequelize'
import type { FastifyInstance } from 'fastify'
import { createKernelApp } from '../../../index.js'
import { profiled } from '../../profiler/helpers.js'
import { TestPostgres } from '../../postgres/server.js'
import type { DbStatementRecord } from '../../../src/profiler/panels/db/collector.js'

const postgres = await TestPostgres.start(t)
const setup = new pg.Client({ connectionString: postgres.url })
await setup.connect()
await setup.query('CREATE TABLE authors (id int PRIMARY KEY, name text NOT NULL, api_key text)')
await setup.query('INSERT INTO authors VALUES (1, \'Le Guin\', \'key-1\'), (2, \'Calvino\', \'key-2\')')
await setup.end()

// each library's pool is closed by its own test's teardown, before the server stops

/** An app with the kernel in debug and one route; the statements of one request to it. */
async function statementsOf (t: Test, route: () => Promise<unknown>): Promise<{ body: unknown, statements: DbStatementRecord[], json: string }> {
  const app: FastifyInstance = await createKernelApp({ kernel: { debug: true } })
  app.get('/authors', route)
  t.teardown(() => app.close())
  const { res, profile } = await profiled(app, { url: '/authors' })
  return { body: res.json(), statements: profile.collected.db!.statements, json: JSON.stringify(profile) }
}

function check (t: Test, statements: DbStatementRecord[], json: string): void {
  for (const statement of statements) t.match(statement, { system: 'postgresql', driver: 'pg', database: 'postgres' })
  t.notMatch(json, /key-[0-9]|s3cret/, 'no secret value anywhere in the profile')
}

t.test('Drizzle (node-postgres)', async (t) => {
  const pool = new pg.Pool({ connectionString: postgres.url })
  t.teardown(() => pool.end())
  const authors = pgTable('authors', { id: integer('id').primaryKey(), name: text('name').notNull(), apiKey: text('api_key') })
  const db = drizzle(pool)
  const { body, statements, json } = await statementsOf(t, async () => {
    await db.insert(authors).values({ id: 10, name: 'Borges', apiKey: 's3cret-d' })
    return await db.select({ name: authors.name }).from(authors).where(eq(authors.id, 1))
  })
  t.same(body, [{ name: 'Le Guin' }])
  t.same(statements.map((s) => [s.statement, s.params]), [
    ['insert into "authors" ("id", "name", "api_key") values ($1, $2, $3)', [10, 'Borges', '******']],
    ['select "name" from "authors" where "authors"."id" = $1', [1]]
  ])
  check(t, statements, json)
})

t.test('Kysely (PostgresDialect, a checked-out client)', async (t) => {
  const db = new Kysely<{ authors: { id: number, name: string, api_key: string | null } }>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: postgres.url }) }) })
  t.teardown(() => db.destroy())
  const { body, statements, json } = await statementsOf(t, async () => {
    await db.insertInto('authors').values({ id: 11, name: 'Woolf', api_key: 's3cret-k' }).execute()
    return await db.selectFrom('authors').select('name').where('id', '=', 2).execute()
  })
  t.same(body, [{ name: 'Calvino' }])
  t.same(statements.map((s) => [s.statement, s.params]), [
    ['insert into "authors" ("id", "name", "api_key") values ($1, $2, $3)', [11, 'Woolf', '******']],
    ['select "name" from "authors" where "id" = $1', [2]]
  ])
  check(t, statements, json)
})

t.test('Knex (its own pool of pg clients)', async (t) => {
  const db = knex({ client: 'pg', connection: postgres.url })
  t.teardown(() => db.destroy())
  const { body, statements, json } = await statementsOf(t, async () => {
    await db('authors').insert({ id: 12, name: 'Morrison', api_key: 's3cret-x' })
    return await db('authors').select('name').where({ id: 1 })
  })
  t.same(body, [{ name: 'Le Guin' }])
  t.same(statements.map((s) => [s.statement, s.params]), [
    // Knex asks a new connection its server's version
    ['select version();', undefined],
    ['insert into "authors" ("api_key", "id", "name") values ($1, $2, $3)', ['******', 12, 'Morrison']],
    ['select "name" from "authors" where "id" = $1', [1]]
  ])
  check(t, statements, json)
})

t.test('TypeORM (postgres driver)', async (t) => {
  const Author = new EntitySchema<{ id: number, name: string, apiKey: string | null }>({
    name: 'Author',
    tableName: 'authors',
    columns: { id: { type: Number, primary: true }, name: { type: String }, apiKey: { type: String, name: 'api_key', nullable: true } }
  })
  const source = new DataSource({ type: 'postgres', url: postgres.url, entities: [Author], logging: false })
  await source.initialize()
  t.teardown(() => source.destroy())
  const { body, statements, json } = await statementsOf(t, async () => {
    await source.getRepository(Author).insert({ id: 13, name: 'Achebe', apiKey: 's3cret-t' })
    const found = await source.getRepository(Author).findOneBy({ id: 2 })
    return { name: found?.name }
  })
  t.same(body, { name: 'Calvino' })
  const insert = statements.find((s) => s.statement.startsWith('INSERT INTO "authors"'))
  t.match(insert, { statement: /^INSERT INTO "authors"\("id", "name", "api_key"\) VALUES \(\$1, \$2, \$3\)/, params: [13, 'Achebe', '******'] }, 'the insert, its secret column masked')
  const select = statements.find((s) => s.statement.startsWith('SELECT'))
  t.match(select, { statement: /FROM "authors" "Author" WHERE .*"Author"\."id" = \$1/, params: [2] }, 'the select with its value')
  check(t, statements, json)
})

t.test('Sequelize (v6, pg)', async (t) => {
  const sequelize = new Sequelize(postgres.url, { logging: false })
  t.teardown(() => sequelize.close())
  const Author = sequelize.define('Author', { id: { type: DataTypes.INTEGER, primaryKey: true }, name: DataTypes.TEXT, apiKey: { type: DataTypes.TEXT, field: 'api_key' } }, { tableName: 'authors', timestamps: false })
  const { body, statements, json } = await statementsOf(t, async () => {
    await Author.create({ id: 14, name: 'Lispector', apiKey: 's3cret-s' })
    const found = await Author.findByPk(1)
    return { name: found?.get('name') }
  })
  t.same(body, { name: 'Le Guin' })
  t.match(statements.find((s) => s.statement.startsWith('INSERT')), { statement: 'INSERT INTO "authors" ("id","name","api_key") VALUES ($1,$2,$3) RETURNING "id","name","api_key";', params: [14, 'Lispector', '******'] }, 'the insert (bound values), its secret column masked')
  t.match(statements.find((s) => s.statement.startsWith('SELECT')), { statement: 'SELECT "id", "name", "api_key" AS "apiKey" FROM "authors" AS "Author" WHERE "Author"."id" = 1;' }, 'the select (Sequelize writes its values into the statement)')
  check(t, statements, json)
})
