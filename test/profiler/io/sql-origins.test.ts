/**
 * Every SQL library the README lists shows the line of the app that made each statement, with
 * the real library against a real server: pg (a Client, a checked-out client, `Pool#query` on a
 * cold and on a warm pool, a Query object), Drizzle, Prisma 7 (@prisma/adapter-pg), Kysely, Knex,
 * TypeORM and Sequelize on pg,
 * better-sqlite3 (and Drizzle on it), and node:sqlite where Node has it. mysql2 (a connection,
 * a pool, a queued caller) is in test/profiler/origin.test.ts.
 *
 * `Pool#query` hands its idle client over on the next tick (a new one once connected): the
 * statement runs with no frame of the app's on its stack, and takes the stack of the call to
 * the pool as its origin.
 */
import 'reflect-metadata'
import t from 'tap'
import type { Test } from 'tap'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import Database from 'better-sqlite3'
import { drizzle } from 'drizzle-orm/node-postgres'
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3'
import { eq } from 'drizzle-orm'
import { integer, pgTable, text } from 'drizzle-orm/pg-core'
import { integer as sqliteInteger, sqliteTable, text as sqliteText } from 'drizzle-orm/sqlite-core'
import { Kysely, PostgresDialect } from 'kysely'
import knex from 'knex'
import { DataSource, EntitySchema } from 'typeorm'
import { DataTypes, Sequelize } from 'sequelize'
import { PrismaPg } from '@prisma/adapter-pg'
import { PrismaClient } from '../fixtures/prisma/generated/client.js'
import { createKernelApp } from '../../../index.js'
import { hasNodeSqlite } from '../../../src/profiler/panels/db/sqlite.js'
import { profiled } from '../helpers.js'
import { TestPostgres } from '../../postgres/server.js'

const FILE = 'test/profiler/io/sql-origins.test.ts'
const source = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n')
/** The line of this file marked `// at: <name>`. */
function lineOf (name: string): string {
  const index = source.findIndex((line) => line.endsWith(`// at: ${name}`))
  if (index === -1) throw new Error(`no line marked ${name}`)
  return `${FILE}:${index + 1}`
}

const postgres = await TestPostgres.start(t)
const setup = new pg.Client({ connectionString: postgres.url })
await setup.connect()
await setup.query('CREATE TABLE authors (id int PRIMARY KEY, name text NOT NULL)')
await setup.query('INSERT INTO authors VALUES (1, \'Le Guin\'), (2, \'Calvino\')')
await setup.end()

const pgAuthors = pgTable('authors', { id: integer('id').primaryKey(), name: text('name').notNull() })
const sqliteAuthors = sqliteTable('authors', { id: sqliteInteger('id').primaryKey(), name: sqliteText('name').notNull() })
const Author = new EntitySchema<{ id: number, name: string }>({ name: 'Author', tableName: 'authors', columns: { id: { type: Number, primary: true }, name: { type: String } } })

interface Case {
  name: string
  /** the route's body, run once per request; its statements are on the lines marked `// at: <name>` */
  route: () => Promise<unknown>
  /** what readies the library (before the app), and closes it */
  open?: () => Promise<void>
  close: () => Promise<unknown>
  /**
   * requests made before the one checked (a warm pool; 1 by default: a capture site learns from
   * its first stacks how deep the app's frame lies below the library's call, and a first call
   * deeper than the sites' previous ones shows none rather than a wrong one)
   */
  warm?: number
  /** the statements of the checked request, by the marks of their lines (null: known to show none) */
  marks: Array<string | null>
  /** statements the library makes for itself first (Knex's `select version()`): their origin is the first mark's */
  skip?: (statement: string) => boolean
}

const client = new pg.Client({ connectionString: postgres.url })
const checkout = new pg.Pool({ connectionString: postgres.url })
const warm = new pg.Pool({ connectionString: postgres.url })
const queued = new pg.Pool({ connectionString: postgres.url, max: 1 })
const drizzlePool = new pg.Pool({ connectionString: postgres.url })
const drizzleDb = drizzle(drizzlePool)
const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: postgres.url }) })
const kysely = new Kysely<{ authors: { id: number, name: string } }>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: postgres.url }) }) })
const knexDb = knex({ client: 'pg', connection: postgres.url })
const typeorm = new DataSource({ type: 'postgres', url: postgres.url, entities: [Author], logging: false })
const sequelize = new Sequelize(postgres.url, { logging: false })
const SequelizeAuthor = sequelize.define('Author', { id: { type: DataTypes.INTEGER, primaryKey: true }, name: DataTypes.TEXT }, { tableName: 'authors', timestamps: false })
const sqlite = new Database(':memory:')
sqlite.exec('CREATE TABLE authors (id INTEGER PRIMARY KEY, name TEXT NOT NULL); INSERT INTO authors VALUES (1, \'Le Guin\')')
const sqliteDrizzle = drizzleSqlite(sqlite)

const cases: Case[] = [
  {
    name: 'pg Client#query',
    open: async () => { await client.connect() },
    close: () => client.end(),
    route: async () => {
      await client.query('SELECT name FROM authors WHERE id = $1', [1]) // at: client
      return await new Promise((resolve, reject) => { client.query('SELECT 2', (error, result) => { if (error !== null) reject(error); else resolve(result.rows) }) }) // at: client callback
    },
    marks: ['client', 'client callback']
  },
  {
    name: 'pg checked-out client (Pool#connect, then its query)',
    close: () => checkout.end(),
    route: async () => {
      const connection = await checkout.connect()
      try {
        return (await connection.query('SELECT name FROM authors WHERE id = $1', [2])).rows // at: checked out
      } finally {
        connection.release()
      }
    },
    marks: ['checked out']
  },
  {
    name: 'pg Pool#query on a cold pool (a new client connects first)',
    close: async () => undefined,
    route: async () => {
      const cold = new pg.Pool({ connectionString: postgres.url })
      try {
        return (await cold.query('SELECT name FROM authors WHERE id = $1', [1])).rows // at: cold
      } finally {
        await cold.end()
      }
    },
    marks: ['cold']
  },
  {
    name: 'pg Pool#query on a warm pool (its idle client handed over on the next tick), a callback, a Query object',
    close: () => warm.end(),
    warm: 2,
    route: async () => {
      await warm.query('SELECT name FROM authors WHERE id = $1', [1]) // at: warm
      await new Promise((resolve) => { warm.query('SELECT 2', resolve) }) // at: warm callback
      return (await warm.query({ text: 'SELECT name FROM authors WHERE id = $1', values: [2], name: 'author-by-id' })).rows // at: warm config
    },
    marks: ['warm', 'warm callback', 'warm config']
  },
  {
    name: 'pg Pool#query waiting for the one client of a full pool',
    close: () => queued.end(),
    route: async () => await Promise.all([queued.query('SELECT 1'), queued.query('SELECT 2')]), // at: queued
    marks: ['queued', 'queued']
  },
  {
    name: 'Drizzle (node-postgres, on a pool)',
    close: () => drizzlePool.end(),
    route: async () => {
      await drizzleDb.select({ name: pgAuthors.name }).from(pgAuthors).where(eq(pgAuthors.id, 1)) // at: drizzle
      return await drizzleDb.execute('SELECT 1') // at: drizzle execute
    },
    marks: ['drizzle', 'drizzle execute']
  },
  {
    // the client generated from test/profiler/fixtures/prisma/schema.prisma
    name: 'Prisma 7 (@prisma/adapter-pg, on its pg.Pool)',
    close: () => prisma.$disconnect(),
    route: async () => {
      await prisma.author.findFirst({ where: { id: 1 } }) // at: prisma
      await prisma.$queryRaw`SELECT name FROM authors WHERE id = ${2}` // at: prisma raw
      // Prisma batches a tick's findUnique calls (its DataLoader, on process.nextTick): the batch's
      // query has no frame nor async frame of the app's, and shows none rather than a wrong one
      await prisma.author.findUnique({ where: { id: 1 } })
      return await prisma.author.findMany({ where: { id: { in: [1, 2] } }, select: { name: true } }) // at: prisma many
    },
    marks: ['prisma', 'prisma raw', null, 'prisma many']
  },
  {
    name: 'Kysely (PostgresDialect)',
    close: () => kysely.destroy(),
    route: async () => await kysely.selectFrom('authors').select('name').where('id', '=', 2).execute(), // at: kysely
    marks: ['kysely']
  },
  {
    name: 'Knex (pg)',
    close: () => knexDb.destroy(),
    route: async () => await knexDb('authors').select('name').where({ id: 1 }), // at: knex
    marks: ['knex'],
    skip: (statement) => statement === 'select version();'
  },
  {
    name: 'TypeORM (postgres)',
    open: async () => { await typeorm.initialize() },
    close: () => typeorm.destroy(),
    route: async () => await typeorm.getRepository(Author).findOneBy({ id: 2 }), // at: typeorm
    marks: ['typeorm']
  },
  {
    name: 'Sequelize (v6, pg)',
    close: () => sequelize.close(),
    route: async () => await SequelizeAuthor.findByPk(1), // at: sequelize
    marks: ['sequelize']
  },
  {
    name: 'better-sqlite3, and Drizzle on it',
    close: async () => { sqlite.close() },
    route: async () => {
      sqlite.prepare('SELECT name FROM authors WHERE id = ?').get(1) // at: better-sqlite3
      return sqliteDrizzle.select({ name: sqliteAuthors.name }).from(sqliteAuthors).where(eq(sqliteAuthors.id, 1)).all() // at: drizzle sqlite
    },
    marks: ['better-sqlite3', 'drizzle sqlite']
  }
]

async function check (t: Test, c: Case): Promise<void> {
  await c.open?.()
  t.teardown(c.close)
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/authors', async () => await c.route())
  t.teardown(() => app.close())
  for (let i = 0; i < (c.warm ?? 1); i++) await app.inject({ url: '/authors' })
  const { res, profile } = await profiled(app, { url: '/authors' })
  t.equal(res.statusCode, 200, res.statusCode === 200 ? 'answered' : res.body.slice(0, 300))
  const statements = profile.collected.db!.statements.filter((s) => c.skip?.(s.statement) !== true)
  t.same(statements.map((s) => s.origin === undefined ? null : `${s.origin.file}:${s.origin.line}`), c.marks.map((mark) => mark === null ? null : lineOf(mark)), `${c.name}: each statement names the app's line`)
}

for (const c of cases) t.test(c.name, (t) => check(t, c))

t.test('node:sqlite DatabaseSync', { skip: hasNodeSqlite ? false : 'no node:sqlite on this Node line' }, async (t) => {
  const { DatabaseSync } = await import('node:sqlite' as string) as { DatabaseSync: new (file: string) => { exec: (sql: string) => void, prepare: (sql: string) => { get: (...a: unknown[]) => unknown }, close: () => void } }
  const db = new DatabaseSync(':memory:')
  db.exec('CREATE TABLE authors (id INTEGER PRIMARY KEY, name TEXT NOT NULL); INSERT INTO authors VALUES (1, \'Le Guin\')')
  await check(t, {
    name: 'node:sqlite',
    close: async () => { db.close() },
    route: async () => db.prepare('SELECT name FROM authors WHERE id = ?').get(1), // at: node:sqlite
    marks: ['node:sqlite']
  })
})
