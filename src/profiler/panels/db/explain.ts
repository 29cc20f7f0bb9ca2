import { LRUCache } from 'lru-cache'
import { randomString } from '../../../random-pool.js'
import { REDACTED } from '../../../http/redact.js'
import { HttpException } from '../../../errors/exceptions.js'
import { analyzeSql, isPlainRead } from './sql.js'

/**
 * EXPLAIN on demand, from the Database panel (Doctrine's explainAction, Django Debug Toolbar's
 * Explain): a read the app made is explained through the pool or connection it went through,
 * with its original values. What is needed for it stays in this process's memory — never in a
 * stored profile, whose parameters are masked: a weak reference to the pool or connection (the
 * app's, which it may close and drop), the statement and its values, under a random id that the
 * profile carries. A profile read from another process's storage, or after a restart, or whose
 * pool is gone, cannot be explained, and says so.
 */

/** What a statement can be explained through. */
export interface ExplainVia {
  /** a pg-pool Pool (a pooled client's), a pg Client (a connection of its own, or of another pool: Knex's, Sequelize's), mysql2's core Pool, a better-sqlite3 Database */
  kind: 'pg-pool' | 'pg-client' | 'mysql2-pool' | 'sqlite'
  handle: object
}

interface Explainable {
  kind: ExplainVia['kind']
  /** the pool or database it went through (not kept alive by this) */
  ref: WeakRef<object>
  /**
   * a pg client's settings and class (kind `pg-client`): a connection of its own is opened with
   * them, so that the client itself need not live (an ORM's pool closes its idle connections)
   */
  client?: { parameters: object, Client: PgClientLike['constructor'] }
  statement: string
  values: unknown
  system: string
  /** the secret values among them: a plan may quote them (`Filter: (api_key = '…')`), and shows them masked */
  secrets: string[]
}

/** The statements most recently recorded that could be explained: bounded, the oldest forgotten. */
const explainables = new LRUCache<string, Explainable>({ max: 2000 })

/** One weak reference per pool or connection, whatever the number of its statements noted. */
const references = new WeakMap<object, WeakRef<object>>()

function referenceTo (handle: object): WeakRef<object> {
  let reference = references.get(handle)
  if (reference === undefined) {
    reference = new WeakRef(handle)
    references.set(handle, reference)
  }
  return reference
}

/**
 * Notes a plain read (its caller knows it is one: SqlAnalysis's `plainRead`) made through a
 * known pool as explainable; the id its profile carries.
 */
export function explainable (statement: string, values: unknown, system: string, via: ExplainVia, secrets: readonly unknown[] = []): string {
  const id = randomString(12, 'base64url')
  const texts = secrets.filter((value) => value !== null && value !== undefined).map(String).filter((text) => text !== '')
  const entry: Explainable = { kind: via.kind, ref: referenceTo(via.handle), statement, values, system, secrets: texts }
  const client = via.handle as Partial<PgClientLike>
  if (via.kind === 'pg-client' && typeof client.connectionParameters === 'object' && client.connectionParameters !== null && typeof client.constructor === 'function') {
    entry.client = { parameters: client.connectionParameters, Client: client.constructor }
  }
  explainables.set(id, entry)
  return id
}

function masked (explanation: Explanation, secrets: readonly string[]): Explanation {
  if (secrets.length === 0) return explanation
  const mask = (text: string): string => secrets.reduce((out, secret) => out.replaceAll(secret, REDACTED), text)
  return { columns: explanation.columns, rows: explanation.rows.map((row) => row.map(mask)) }
}

export interface Explanation {
  columns: string[]
  rows: string[][]
}

/** Why a statement was not explained: a client error (4xx), told as is. */
export class ExplainRefusal extends HttpException {}

/** A short answer for the cells of the plan: what the database returned, as text. */
function cell (value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'object' && !(value instanceof Date)) {
    try { return JSON.stringify(value) } catch { return String(value) }
  }
  return String(value)
}

const MAX_ROWS = 500

function table (rows: unknown): Explanation {
  const list = Array.isArray(rows) ? rows.slice(0, MAX_ROWS) as Array<Record<string, unknown>> : []
  const columns: string[] = []
  for (const row of list) for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key)
  return { columns, rows: list.map((row) => columns.map((column) => cell(row[column]))) }
}

interface PgQueryable {
  query: (config: unknown, values?: unknown) => Promise<{ rows: unknown[] }>
}
interface PgPoolLike { connect: () => Promise<PgQueryable & { release: (error?: unknown) => void }> }
interface PgClientLike extends PgQueryable {
  connectionParameters?: object
  constructor: new (config: object) => PgQueryable & { connect: () => Promise<unknown>, end: () => Promise<unknown> }
}

/** In a READ ONLY transaction, a second guard beside the check that it is a read: the database refuses any write. */
async function explainPg (client: PgQueryable, statement: string, values: unknown): Promise<Explanation> {
  await client.query('BEGIN TRANSACTION READ ONLY')
  try {
    const result = await client.query({ text: `EXPLAIN ${statement}`, values: Array.isArray(values) ? values : undefined })
    return table(result.rows)
  } finally {
    await client.query('ROLLBACK')
  }
}

async function viaPgPool (pool: PgPoolLike, statement: string, values: unknown): Promise<Explanation> {
  const client = await pool.connect()
  let failure: unknown
  try {
    return await explainPg(client, statement, values)
  } catch (error) {
    failure = error
    throw error
  } finally {
    client.release(failure)
  }
}

/**
 * A client that is no pg-pool's (a connection of the app's own, or of Knex's or Sequelize's
 * pools) may be in another request's hands, inside its transaction: a connection of its own is
 * opened with the same settings (host, database, user, password, TLS…), used and closed.
 */
async function viaPgClient (client: PgClientLike, statement: string, values: unknown): Promise<Explanation> {
  if (client.connectionParameters === undefined) throw new ExplainRefusal(410, 'The connection\'s settings are not known: it cannot be explained.')
  const fresh = new client.constructor(client.connectionParameters)
  await fresh.connect()
  try {
    return await explainPg(fresh, statement, values)
  } finally {
    await fresh.end()
  }
}

interface MysqlConnection {
  query: (sql: string, values: unknown, callback: (error: unknown, rows?: unknown) => void) => unknown
  release: () => void
  destroy: () => void
}
interface MysqlPool { getConnection: (callback: (error: unknown, connection?: MysqlConnection) => void) => void }

async function viaMysqlPool (pool: MysqlPool, statement: string, values: unknown): Promise<Explanation> {
  const connection = await new Promise<MysqlConnection>((resolve, reject) => {
    pool.getConnection((error, connection) => { if (error !== null && error !== undefined) reject(error); else resolve(connection!) })
  })
  const run = async (sql: string, args?: unknown): Promise<unknown> => await new Promise((resolve, reject) => {
    connection.query(sql, args, (error, rows) => { if (error !== null && error !== undefined) reject(error); else resolve(rows) })
  })
  // mysql2's query() wrote the values into the statement already when it had no placeholder left
  const placeholders = analyzeSql(statement, 'mysql').slots.some((slot) => !slot.literal)
  try {
    await run('START TRANSACTION READ ONLY')
    try {
      return table(await run(`EXPLAIN ${statement}`, placeholders ? values : undefined))
    } finally {
      await run('ROLLBACK')
    }
  } finally {
    connection.release()
  }
}

interface SqliteDatabase {
  open: boolean
  prepare: (sql: string) => { readonly: boolean, all: (...args: unknown[]) => unknown[] }
}

function viaSqlite (database: SqliteDatabase, statement: string, values: unknown): Explanation {
  if (!database.open) throw new ExplainRefusal(410, 'The database was closed: the statement cannot be explained.')
  // SQLite tells itself whether a statement writes
  if (!database.prepare(statement).readonly) throw new ExplainRefusal(422, 'Only a read is explained, and SQLite says this statement writes.')
  return table(database.prepare(`EXPLAIN QUERY PLAN ${statement}`).all(...(Array.isArray(values) ? values : [])))
}

/** Explains the statement noted under `id`; an ExplainRefusal when it cannot, the database's own error when it fails. */
export async function explain (id: string): Promise<Explanation & { statement: string, system: string }> {
  const entry = explainables.get(id)
  if (entry === undefined) {
    throw new ExplainRefusal(410, 'This statement cannot be explained: it was recorded by another process (a shared storage), before this process started, or too long ago.')
  }
  if (!isPlainRead(entry.statement, entry.system)) throw new ExplainRefusal(422, 'Only a read (a single SELECT) is explained.')
  // a pg client's own connection is not needed: a new one is opened with its settings
  const handle = entry.client !== undefined ? { connectionParameters: entry.client.parameters, constructor: entry.client.Client } : entry.ref.deref()
  if (handle === undefined) throw new ExplainRefusal(410, 'The pool or connection this statement went through is gone: it cannot be explained.')
  const { statement, values, system } = entry
  let explanation: Explanation
  if (entry.kind === 'pg-pool') explanation = await viaPgPool(handle as PgPoolLike, statement, values)
  else if (entry.kind === 'pg-client') explanation = await viaPgClient(handle as unknown as PgClientLike, statement, values)
  else if (entry.kind === 'mysql2-pool') explanation = await viaMysqlPool(handle as MysqlPool, statement, values)
  else explanation = viaSqlite(handle as SqliteDatabase, statement, values)
  return { ...masked(explanation, entry.secrets), statement, system }
}

/** Forgets every statement noted: what a process that did not record them knows (tests). */
export function forgetExplainables (): void {
  explainables.clear()
}
