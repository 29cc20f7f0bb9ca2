import { LRUCache } from 'lru-cache'
import { randomString } from '../../../random-pool.js'
import { REDACTED } from '../../../http/redact.js'
import { HttpException } from '../../../errors/exceptions.js'
import { analyzeSql } from './sql.js'
import { singleReadProblem } from './sql-statements.js'
import { retainedSize } from '../../retained-size.js'

/**
 * EXPLAIN on demand, from the Database panel (Doctrine's explainAction, Django Debug Toolbar's
 * Explain): a read the app made is explained through the pool or connection it went through,
 * with its original values. What is needed for it stays in this process's memory — never in a
 * stored profile, whose parameters are masked: a weak reference to the pool or connection (the
 * app's, which it may close and drop) — for a pg client, its settings, since an ORM's pool closes
 * its idle clients while the pool lives —, the statement and its values, under a random id that the
 * profile carries. A profile read from another process's storage, or after a restart, or whose
 * pool is gone, cannot be explained, and says so.
 *
 * What EXPLAIN may run (docs/security.md): exactly one read, by two locks. The statement must be
 * one SELECT or WITH by its dialect's own lexer (sql-statements.ts: comments and quoting as the
 * server reads them, every way its settings may read them); and it is sent in the protocol's
 * single-statement form, which the server refuses for anything more: PostgreSQL's extended
 * protocol (one Parse message), MySQL's prepared statement (`execute()`, on a connection opened
 * without CLIENT_MULTI_STATEMENTS), SQLite's `prepare()` (one statement by design). It runs in a
 * READ ONLY transaction, on a connection of its own (never one of the app's pool), one at a
 * time per database, for at most EXPLAIN_TIMEOUT_MS.
 */

/** What a statement can be explained through. */
export interface ExplainVia {
  /** a pg-pool Pool (a pooled client's), a pg Client (a connection of its own, or of another pool: Knex's, Sequelize's), mysql2's core Pool, a better-sqlite3 Database */
  kind: 'pg-pool' | 'pg-client' | 'mysql2-pool' | 'sqlite'
  handle: object
  /** mysql2: the class of the pool's connections (a connection of EXPLAIN's own is made with it) */
  connectionClass?: Function
}

interface Explainable {
  kind: ExplainVia['kind']
  /** the pool or database it went through (not kept alive by this) */
  ref: WeakRef<object>
  /**
   * a pg client's settings and class (kind `pg-client`): EXPLAIN's connection of its own is
   * opened with them, so that the client itself need not live (an ORM's pool closes its idle
   * connections, and the client is collected while the pool lives)
   */
  client: { parameters: object, Client: PgClientClass } | undefined
  connectionClass: WeakRef<Function> | undefined
  statement: string
  values: unknown
  system: string
  /** the secret values among them: a plan may quote them (`Filter: (api_key = '…')`), and shows them masked */
  secrets: string[]
  /** what keeping it costs: the byte bound counts it */
  bytes: number
}

/** Bytes one statement and its values may take to be kept for EXPLAIN: a larger one is not offered. */
export const MAX_EXPLAINABLE_BYTES = 256 * 1024
/** Bytes all the statements kept for EXPLAIN may take together (and 2,000 of them at most): the oldest are forgotten first. */
export const EXPLAIN_CACHE_BYTES = 8 * 1024 * 1024
/** How long one EXPLAIN may run: the server stops it (statement_timeout, max_statement_time), and the kernel closes its connection. */
export const EXPLAIN_TIMEOUT_MS = 5000

/** The statements most recently recorded that could be explained: bounded by count and bytes, the oldest forgotten. */
const explainables = new LRUCache<string, Explainable>({ max: 2000, maxSize: EXPLAIN_CACHE_BYTES, sizeCalculation: (entry) => Math.max(1, entry.bytes) })

/** One weak reference per pool or connection, whatever the number of its statements noted. */
const references = new WeakMap<object, WeakRef<object>>()

function referenceTo<T extends object> (handle: T): WeakRef<T> {
  let reference = references.get(handle)
  if (reference === undefined) {
    reference = new WeakRef(handle)
    references.set(handle, reference)
  }
  return reference as WeakRef<T>
}

/**
 * Notes a plain read (its caller knows it is one: SqlAnalysis's `plainRead`) made through a
 * known pool as explainable; the id its profile carries, or undefined when it is too large to
 * keep (MAX_EXPLAINABLE_BYTES).
 */
export function explainable (statement: string, values: unknown, system: string, via: ExplainVia, secrets: readonly unknown[] = []): string | undefined {
  const bytes = retainedSize(statement) + retainedSize(values)
  if (bytes > MAX_EXPLAINABLE_BYTES) return undefined
  const id = randomString(12, 'base64url')
  const texts = secrets.filter((value) => value !== null && value !== undefined).map(String).filter((text) => text !== '')
  const connectionClass = via.connectionClass === undefined ? undefined : referenceTo(via.connectionClass)
  const handle = via.handle as Partial<PgClientLike>
  const client = via.kind === 'pg-client' && typeof handle.connectionParameters === 'object' && handle.connectionParameters !== null && typeof handle.constructor === 'function'
    ? { parameters: handle.connectionParameters, Client: handle.constructor }
    : undefined
  explainables.set(id, { kind: via.kind, ref: referenceTo(via.handle), client, connectionClass, statement, values, system, secrets: texts, bytes })
  return id
}

/** What the EXPLAIN cache holds now: for tests and the memory figures. */
export function explainCacheBytes (): number {
  return explainables.calculatedSize
}

function maskText (text: string, secrets: readonly string[]): string {
  return secrets.reduce((out, secret) => out.replaceAll(secret, REDACTED), text)
}

function masked (explanation: Explanation, secrets: readonly string[]): Explanation {
  if (secrets.length === 0) return explanation
  return { columns: explanation.columns, rows: explanation.rows.map((row) => row.map((text) => maskText(text, secrets))) }
}

export interface Explanation {
  columns: string[]
  rows: string[][]
}

/** Why a statement was not explained: a client error (4xx) or a refusal for now (503), told as is. */
export class ExplainRefusal extends HttpException {}

/** The database's own answer to EXPLAIN (a syntax it refuses, a table since dropped), its secret values masked. */
export class ExplainFailure extends Error {}

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
interface PgConnection extends PgQueryable {
  connect: () => Promise<unknown>
  end: () => Promise<unknown>
  on: (event: 'error', listener: (error: unknown) => void) => unknown
}
type PgClientClass = new (config: object) => PgConnection
interface PgPoolLike { options?: object, Client?: PgClientClass }
interface PgClientLike extends PgQueryable {
  connectionParameters?: { host?: unknown, port?: unknown, database?: unknown, user?: unknown }
  constructor: PgClientClass
}

/** A statement's run, stopped from outside when it takes too long (its connection closed). */
interface Run { stop: () => void }

/**
 * One read, in the protocol's single-statement form: pg's extended protocol (`queryMode:
 * 'extended'`: one Parse message, which PostgreSQL refuses for more than one command), in a READ
 * ONLY transaction whose statement_timeout stops it server-side.
 */
async function explainPg (client: PgQueryable, statement: string, values: unknown, timeoutMs: number): Promise<Explanation> {
  await client.query('BEGIN TRANSACTION READ ONLY')
  try {
    await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.round(timeoutMs))}`)
    const result = await client.query({ text: `EXPLAIN ${statement}`, values: Array.isArray(values) ? values : [], queryMode: 'extended' })
    return table(result.rows)
  } finally {
    await client.query('ROLLBACK')
  }
}

/**
 * PostgreSQL, through a connection of EXPLAIN's own, opened with the settings of the app's pool
 * (pg-pool's `options`) or client (its `connectionParameters`: host, database, user, password,
 * TLS…), used and closed: the app's own connections are never taken, and a client of another
 * pool (Knex's, Sequelize's) may be inside another request's transaction.
 */
async function viaPg (Client: PgClientClass, settings: object, statement: string, values: unknown, run: Run, timeoutMs: number): Promise<Explanation> {
  const fresh = new Client(settings)
  // a connection that fails later (the server restarting) must not crash the app
  fresh.on('error', () => {})
  run.stop = () => { fresh.end().catch(() => undefined) }
  await fresh.connect()
  try {
    return await explainPg(fresh, statement, values, timeoutMs)
  } finally {
    await fresh.end().catch(() => undefined)
  }
}

interface MysqlConnection {
  query: (sql: string, callback: (error: unknown, rows?: unknown) => void) => unknown
  execute: (sql: string, values: unknown, callback: (error: unknown, rows?: unknown) => void) => unknown
  end: (callback?: () => void) => void
  destroy: () => void
  on: (event: 'error', listener: (error: unknown) => void) => unknown
}
interface MysqlPool { config?: { connectionConfig?: object } }
type MysqlConnectionClass = new (options: { config: object }) => MysqlConnection

/** MySQL's client capability flag for several statements in one COM_QUERY */
const CLIENT_MULTI_STATEMENTS = 1 << 16

/** The pool's connection settings, copied as mysql2's pool copies them, without CLIENT_MULTI_STATEMENTS. */
function singleStatementConfig (pool: MysqlPool): object | undefined {
  const config = pool.config?.connectionConfig as { clientFlags?: number, multipleStatements?: boolean } | undefined
  if (config === undefined || typeof config.clientFlags !== 'number') return undefined
  const copy = Object.create(Object.getPrototypeOf(config) as object, Object.getOwnPropertyDescriptors(config)) as { clientFlags: number, multipleStatements: boolean }
  copy.clientFlags &= ~CLIENT_MULTI_STATEMENTS
  copy.multipleStatements = false
  return copy
}

/**
 * MySQL and MariaDB, through a connection of EXPLAIN's own with the pool's settings but without
 * CLIENT_MULTI_STATEMENTS (the server then refuses a second statement), the statement sent as a
 * prepared statement (`execute()`: COM_STMT_PREPARE takes one statement), in a READ ONLY
 * transaction, with MariaDB's max_statement_time (MySQL's max_execution_time) set.
 */
async function viaMysqlPool (pool: MysqlPool, Connection: MysqlConnectionClass, statement: string, values: unknown, run: Run, timeoutMs: number): Promise<Explanation> {
  const config = singleStatementConfig(pool)
  if (config === undefined) throw new ExplainRefusal(410, 'The pool\'s connection settings are not known: the statement cannot be explained.')
  const connection = new Connection({ config })
  connection.on('error', () => {})
  run.stop = () => { connection.destroy() }
  const query = async (sql: string): Promise<unknown> => await new Promise((resolve, reject) => {
    connection.query(sql, (error, rows) => { if (error !== null && error !== undefined) reject(error); else resolve(rows) })
  })
  const execute = async (sql: string, args: unknown[]): Promise<unknown> => await new Promise((resolve, reject) => {
    connection.execute(sql, args, (error, rows) => { if (error !== null && error !== undefined) reject(error); else resolve(rows) })
  })
  // mysql2's query() wrote the values into the statement already when it had no placeholder left
  const placeholders = analyzeSql(statement, 'mysql').slots.some((slot) => !slot.literal)
  try {
    const seconds = Math.max(0.001, timeoutMs / 1000)
    await query(`SET SESSION max_statement_time = ${seconds}`).catch(async () => await query(`SET SESSION max_execution_time = ${Math.round(timeoutMs)}`)).catch(() => undefined)
    await query('START TRANSACTION READ ONLY')
    try {
      return table(await execute(`EXPLAIN ${statement}`, placeholders && Array.isArray(values) ? values : []))
    } finally {
      await query('ROLLBACK')
    }
  } finally {
    await new Promise<void>((resolve) => { connection.end(() => { resolve() }) })
  }
}

interface SqliteDatabase {
  open: boolean
  prepare: (sql: string) => { readonly: boolean, all: (...args: unknown[]) => unknown[] }
}

/** SQLite's prepare() compiles one statement (better-sqlite3 refuses a text of more), and tells itself whether it writes. */
function viaSqlite (database: SqliteDatabase, statement: string, values: unknown): Explanation {
  if (!database.open) throw new ExplainRefusal(410, 'The database was closed: the statement cannot be explained.')
  if (!database.prepare(statement).readonly) throw new ExplainRefusal(422, 'Only a read is explained, and SQLite says this statement writes.')
  return table(database.prepare(`EXPLAIN QUERY PLAN ${statement}`).all(...(Array.isArray(values) ? values : [])))
}

/** The database a connection or pool reaches: EXPLAINs run one at a time on each. */
function targetOf (settings: unknown): string {
  const { host, port, database, user, socketPath, connectionString } = (settings ?? {}) as Record<string, unknown>
  return `${String(connectionString ?? '')} ${String(socketPath ?? host ?? '')}:${String(port ?? '')}/${String(database ?? '')}@${String(user ?? '')}`
}

/** The databases an EXPLAIN is running on now. */
const running = new Set<string>()

let timeoutMs = EXPLAIN_TIMEOUT_MS

/** How long one EXPLAIN may run (tests shorten it); returns the previous value. */
export function setExplainTimeout (ms: number): number {
  const previous = timeoutMs
  timeoutMs = ms
  return previous
}

/**
 * Runs one EXPLAIN on `target`, alone there, for at most the timeout: another one asked
 * meanwhile is refused (503, try again), one that takes longer is stopped (its connection
 * closed) and answered 503.
 */
async function bounded (target: string, explainIt: (run: Run, timeoutMs: number) => Promise<Explanation>): Promise<Explanation> {
  if (running.has(target)) throw new ExplainRefusal(503, 'Another EXPLAIN is running on this database: one runs at a time. Try again in a moment.', { headers: { 'Retry-After': '1' } })
  running.add(target)
  const limit = timeoutMs
  const run: Run = { stop: () => {} }
  let timer: ReturnType<typeof setTimeout> | undefined
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      run.stop()
      reject(new ExplainRefusal(503, `EXPLAIN took longer than ${limit} ms and was stopped.`, { headers: { 'Retry-After': '5' } }))
    }, limit)
  })
  const work = explainIt(run, limit)
  work.catch(() => undefined)
  try {
    return await Promise.race([work, timedOut])
  } finally {
    clearTimeout(timer)
    // the connection is closed either way: the next EXPLAIN may start once this one's is
    await work.catch(() => undefined)
    running.delete(target)
  }
}

/**
 * Explains the statement noted under `id`; an ExplainRefusal when it cannot (now or ever), an
 * ExplainFailure (its secret values masked) when the database refuses it. `lexer: false` leaves
 * the lexer's check out, so that tests prove the protocol's lock on its own.
 */
export async function explain (id: string, checks: { lexer: boolean } = { lexer: true }): Promise<Explanation & { statement: string, system: string }> {
  const entry = explainables.get(id)
  if (entry === undefined) {
    throw new ExplainRefusal(410, 'This statement cannot be explained: it was recorded by another process (a shared storage), before this process started, or too long ago.')
  }
  const problem = checks.lexer ? singleReadProblem(entry.statement, entry.system) : undefined
  if (problem !== undefined) throw new ExplainRefusal(422, `Only one read (a single SELECT) is explained, and ${problem}.`)
  // a pg client's own connection is not needed: EXPLAIN's is opened with its settings
  const handle: object | undefined = entry.client !== undefined
    ? { connectionParameters: entry.client.parameters, constructor: entry.client.Client }
    : entry.ref.deref()
  if (handle === undefined) throw new ExplainRefusal(410, 'The pool or connection this statement went through is gone: it cannot be explained.')
  const { statement, values, system } = entry
  let explanation: Explanation
  try {
    if (entry.kind === 'pg-pool') {
      const pool = handle as PgPoolLike
      if (pool.options === undefined || typeof pool.Client !== 'function') throw new ExplainRefusal(410, 'The pool\'s settings are not known: it cannot be explained.')
      explanation = await bounded(targetOf(pool.options), async (run, ms) => await viaPg(pool.Client!, pool.options!, statement, values, run, ms))
    } else if (entry.kind === 'pg-client') {
      const client = handle as PgClientLike
      if (client.connectionParameters === undefined) throw new ExplainRefusal(410, 'The connection\'s settings are not known: it cannot be explained.')
      explanation = await bounded(targetOf(client.connectionParameters), async (run, ms) => await viaPg(client.constructor, client.connectionParameters!, statement, values, run, ms))
    } else if (entry.kind === 'mysql2-pool') {
      const pool = handle as MysqlPool
      const Connection = entry.connectionClass?.deref() as MysqlConnectionClass | undefined
      if (Connection === undefined) throw new ExplainRefusal(410, 'The pool\'s connections are gone: it cannot be explained.')
      explanation = await bounded(targetOf(pool.config?.connectionConfig), async (run, ms) => await viaMysqlPool(pool, Connection, statement, values, run, ms))
    } else {
      explanation = viaSqlite(handle as SqliteDatabase, statement, values)
    }
  } catch (error) {
    if (error instanceof ExplainRefusal) throw error
    // a server's error may quote a value the Database panel masks
    throw new ExplainFailure(maskText(error instanceof Error ? error.message : String(error), entry.secrets))
  }
  return { ...masked(explanation, entry.secrets), statement, system }
}

/** Forgets every statement noted: what a process that did not record them knows (tests). */
export function forgetExplainables (): void {
  explainables.clear()
}
