import { currentKernelContext, kernelTrafficOf } from '../../../kernel/async-context.js'
import type { KernelTraffic } from '../../../kernel/async-context.js'
import type { Redactor } from '../../../http/redact.js'
import { REDACTED, truncate } from '../../../http/redact.js'
import { spansOf } from '../../spans.js'
import type { CapturedStack } from '../../origin.js'
import type { OpenSpan, Span } from '../../spans.js'
import type { ChannelSubscription } from '../../instrument/channels.js'
import type { TracedContext } from '../../instrument/traced-call.js'
import { tracedCalls } from '../../instrument/traced-call.js'
import { analyzeSql } from './sql.js'
import { maskRedisArguments } from '../../../redis/secret-arguments.js'
import type { SqlAnalysis, SqlSlot } from './sql.js'
import { runnableSql } from './sql-runnable.js'
import { explainable } from './explain.js'
import { boundedValue, cutString } from '../../bounded-value.js'
import type { ExplainVia } from './explain.js'

export const DB = 'db'

/**
 * The tracing channel an app publishes its SQL on, for a driver that publishes nothing of its
 * own (pg, better-sqlite3, an ORM): the same context as mysql2's `mysql2:query`, plus the
 * database system and the driver's name. See docs/profiler.md.
 */
export const DB_CHANNEL = 'fastify-kernel:db:query'

/** The context of a statement on `mysql2:query`, `mysql2:execute` or the kernel's channel. */
export interface SqlTraceContext {
  /** the statement, as sent */
  query: string
  /** positional (an array) or named (an object) parameters */
  values?: unknown
  database?: string
  /** `mysql`, `postgresql`, `sqlite`… (the kernel's channel; mysql2's is mysql) */
  system?: string
  /** `pg`, `better-sqlite3`, `prisma`… (the kernel's channel) */
  driver?: string
  /** the number of rows, when the result does not tell (the kernel's channel) */
  rows?: number
  /** the name of a prepared statement (pg's `name`) */
  prepared?: string
  /** the values as the driver takes them again, when `values` is another view of them (better-sqlite3's arguments) */
  driverValues?: unknown
  /** the statement or its values were cut when the unit ended (too large to keep whole): shown cut, never explained */
  cut?: boolean
}

/** Characters of a statement kept once its unit ended (the panel shows MAX_STRING of it; mysql2's query() writes the values into it) */
const MAX_KEPT_STATEMENT = 256 * 1024

/** A statement as recorded: references only (`via`, what it can be explained through, is held until the profile is built). */
export class SqlCall {
  constructor (readonly context: SqlTraceContext & TracedContext, readonly system: string, readonly driver: string, readonly traffic: KernelTraffic | undefined, readonly via?: ExplainVia) {}
}

/** Once the unit ended: the statement, its values and rows; not its result set, nor the driver's context. */
export function settleDbSpan (span: Span): void {
  const call = span.data as unknown
  if (!(call instanceof SqlCall)) return
  const { context } = call
  // a large statement or value is kept cut (and counted): forty reads of a 4 MB value cost no 160 MB
  const kept: SqlTraceContext = { query: cutString(context.query, MAX_KEPT_STATEMENT) }
  let cut = kept.query !== context.query
  if (context.values !== undefined) {
    const values = boundedValue(context.values)
    kept.values = values.value
    cut ||= values.cut
  }
  if (context.database !== undefined) kept.database = context.database
  if (context.prepared !== undefined) kept.prepared = context.prepared
  if (context.driverValues !== undefined) {
    const values = boundedValue(context.driverValues)
    kept.driverValues = values.value
    cut ||= values.cut
  }
  if (cut) kept.cut = true
  const rows = rowsOf(context)
  if (rows !== undefined) kept.rows = rows
  span.data = new SqlCall(kept, call.system, call.driver, call.traffic, call.via) as unknown as Record<string, unknown>
}

/**
 * mysql2's pool runs the caller's callback with the connection it hands out between
 * `mysql2:pool:connect`'s asyncStart and asyncEnd, and `pool.query()`/`execute()` make their
 * statement on it right there: the connections being handed out, innermost last, tell which
 * pool a statement went through (its context names none).
 */
const handedOut: object[] = []

function mysqlVia (): ExplainVia | undefined {
  const connection = handedOut.at(-1) as { _pool?: unknown } | undefined
  const pool = connection?._pool
  if (typeof pool !== 'object' || pool === null) return undefined
  // a PoolConnection's parent class is mysql2's Connection: EXPLAIN opens one of its own with it
  const connectionClass = Object.getPrototypeOf(connection!.constructor) as unknown
  return typeof connectionClass === 'function' ? { kind: 'mysql2-pool', handle: pool, connectionClass } : { kind: 'mysql2-pool', handle: pool }
}

function sqlCalls (tracing: string, system: string | undefined, driver: string | undefined): ChannelSubscription {
  return tracedCalls<SqlTraceContext>(tracing, DB, (context, traffic) => typeof context.query === 'string'
    ? new SqlCall(context, system ?? String(context.system ?? 'sql'), driver ?? String(context.driver ?? 'unknown'), traffic, driver === 'mysql2' ? mysqlVia() : undefined)
    : undefined)
}

/**
 * Opens the `db` span of a statement an instrumented driver (pg, better-sqlite3) is making, in
 * the unit the calling code runs for; undefined outside a profiled unit. `context` is kept
 * as it is (references: formatting waits for the profile); its `result` or `error` is set by the
 * caller before it ends the span. `caller`: a stack taken earlier for the same call (a pool's
 * caller, when the statement starts on a later tick), its origin when this one has none.
 */
export function startSql (context: SqlTraceContext & TracedContext, system: string, driver: string, via?: ExplainVia, caller?: CapturedStack): OpenSpan | undefined {
  const unit = currentKernelContext()
  const spans = spansOf(unit)
  if (spans === undefined) return undefined
  return spans.start(DB, DB, new SqlCall(context, system, driver, kernelTrafficOf(unit!), via) as unknown as Record<string, unknown>, undefined, undefined, caller)
}

/**
 * The mysql2 versions whose channels the Database panel reads: `mysql2:query`, `mysql2:execute`
 * and `mysql2:pool:connect` are published from 3.20.0 on (an older copy publishes nothing, so
 * nothing of it is seen). .ci/matrix.sh runs db.test.ts against the oldest and the newest.
 */
export const MYSQL2_VERSIONS = '>=3.20.0 <4'

/** mysql2 (MYSQL2_VERSIONS) publishes its queries and prepared statements; the app publishes the rest on DB_CHANNEL. */
export const dbChannels: readonly ChannelSubscription[] = [
  // a pool hands a freed connection to the next caller from the unit that freed it
  { restore: 'mysql2:pool:connect' },
  {
    tracing: 'mysql2:pool:connect',
    handlers: {
      asyncStart (context: TracedContext) { if (typeof context.result === 'object' && context.result !== null) handedOut.push(context.result) },
      asyncEnd (context: TracedContext) { if (handedOut.at(-1) === context.result) handedOut.pop() }
    }
  },
  sqlCalls('mysql2:query', 'mysql', 'mysql2'),
  sqlCalls('mysql2:execute', 'mysql', 'mysql2'),
  sqlCalls(DB_CHANNEL, undefined, undefined)
]

/** The data of a `db` span, as profiles store it. */
export interface DbSpanData {
  system: string
  /** secret literal values masked (`password = '******'`), cut */
  statement: string
  /** the statement with its literal values taken out: equal shapes with other values are "similar" */
  shape?: string
  params?: unknown[] | Record<string, unknown>
  rows?: number
  driver?: string
  database?: string
  /** the statement with its values written in as literals of its dialect (secret ones masked), to copy */
  runnable?: string
  /** the name of a prepared statement */
  prepared?: string
  /** the id under which this process can EXPLAIN it (a read, through a pool it knows) */
  explain?: string
  /** the kernel's own statement (a session store's), shown apart */
  kernel?: true
  /** what the kernel made it for */
  purpose?: string
}

const MAX_NAME = 200
const MAX_PARAM = 200
const MAX_PARAMS = 100

function rowsOf (context: SqlTraceContext & TracedContext): number | undefined {
  if (typeof context.rows === 'number') return context.rows
  const result = context.result
  if (Array.isArray(result)) return result.length
  if (typeof result !== 'object' || result === null) return undefined
  // pg's rowCount, mysql2's ResultSetHeader, better-sqlite3's run()
  for (const field of ['rowCount', 'affectedRows', 'changes'] as const) {
    const value = (result as Record<string, unknown>)[field]
    if (typeof value === 'number') return value
  }
  const rows = (result as { rows?: unknown }).rows
  return Array.isArray(rows) ? rows.length : undefined
}

function cut (value: unknown, redactor: Redactor): unknown {
  const safe = redactor.value(value)
  return typeof safe === 'string' ? truncate(safe, MAX_PARAM) : safe
}

/** Which values are secret: a placeholder by the column it goes to (`password = ?`) or the name it is given (`:api_key`), a literal by its column. */
function secretSlots (analysis: SqlAnalysis, redactor: Redactor): { indexes: Set<number>, names: Set<string>, test: (slot: SqlSlot) => boolean } {
  const indexes = new Set<number>()
  const names = new Set<string>()
  for (const slot of analysis.slots) {
    if (slot.literal || slot.column === undefined || !redactor.isSecret(slot.column)) continue
    if (slot.index !== undefined) indexes.add(slot.index)
    if (slot.name !== undefined) names.add(slot.name)
  }
  const test = (slot: SqlSlot): boolean => slot.literal
    ? slot.column !== undefined && redactor.isSecret(slot.column)
    : (slot.index !== undefined && indexes.has(slot.index)) || (slot.name !== undefined && (names.has(slot.name) || redactor.isSecret(slot.name)))
  return { indexes, names, test }
}

/** The values of the secret placeholders, to be masked wherever they may show (an EXPLAIN plan). */
function secretValues (values: unknown, analysis: SqlAnalysis, redactor: Redactor): unknown[] {
  if (values === undefined || values === null || typeof values !== 'object') return []
  const { test } = secretSlots(analysis, redactor)
  const out: unknown[] = []
  for (const slot of analysis.slots) {
    if (slot.literal || !test(slot)) continue
    if (Array.isArray(values) && slot.index !== undefined) out.push(values[slot.index])
    else if (!Array.isArray(values)) out.push((values as Record<string, unknown>)[slot.name ?? String((slot.index ?? -1) + 1)])
  }
  if (!Array.isArray(values)) for (const [name, value] of Object.entries(values)) if (redactor.isSecret(name)) out.push(value)
  return out
}

/** a positional parameter reported by name as its 0-based index (OpenTelemetry's `db.query.parameter.0`) */
const INDEX_NAME = /^(?:0|[1-9]\d{0,5})$/

/**
 * Secret by the name it is given (`:password`) or by the column it goes to (`password = ?`);
 * a parameter named by its index goes to the column of that rank. `secrets` gets the values taken out.
 */
function maskedParams (values: unknown, analysis: SqlAnalysis, redactor: Redactor, secrets: string[]): unknown[] | Record<string, unknown> | undefined {
  if (values === undefined || values === null) return undefined
  // no placeholder: the driver put the values into the statement itself (mysql2's query()), where
  // they are shown, and masked by their column
  if (analysis.slots.every((slot) => slot.literal)) return undefined
  const secret = secretSlots(analysis, redactor)
  const hidden = (value: unknown): string => {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint') secrets.push(String(value))
    return REDACTED
  }
  if (Array.isArray(values)) {
    const shown = values.slice(0, MAX_PARAMS).map((value, index) => secret.indexes.has(index) ? hidden(value) : cut(value, redactor))
    if (values.length > MAX_PARAMS) shown.push(`… ${values.length - MAX_PARAMS} more`)
    return shown
  }
  if (typeof values !== 'object') return [cut(values, redactor)]
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(values).slice(0, MAX_PARAMS)) {
    const byIndex = INDEX_NAME.test(name) && secret.indexes.has(Number(name))
    out[name] = byIndex || secret.names.has(name) || redactor.isSecret(name) ? hidden(value) : cut(value, redactor)
  }
  return out
}

/** a literal's quotes and prefix (`'…'`, `E'…'`, `$tag$…$tag$`): what a server's error message may quote of it is inside */
const QUOTES = /^[^'"`$]*(?:\$[^$]*\$|['"`])|(?:\$[^$]*\$|['"`])$/g

/** The statement with the literal values of secret columns masked; `secrets` gets the values taken out. */
function maskedStatement (statement: string, analysis: SqlAnalysis, redactor: Redactor, secrets: string[]): string {
  let out = statement
  for (let i = analysis.slots.length - 1; i >= 0; i--) {
    const slot = analysis.slots[i]!
    if (slot.literal && slot.column !== undefined && redactor.isSecret(slot.column)) {
      const literal = out.slice(slot.start, slot.end)
      secrets.push(literal, literal.replace(QUOTES, ''))
      out = `${out.slice(0, slot.start)}'${REDACTED}'${out.slice(slot.end)}`
    }
  }
  return out
}

/**
 * A Redis command as OpenTelemetry's Redis instrumentations report it (`db.query.text`: the
 * command and its arguments, joined by spaces, those they do not know to be safe as `?`), its
 * passwords masked by the Cache panel's table (`CONFIG SET requirepass …`).
 */
function maskedRedisStatement (statement: string, redactor: Redactor, secrets: string[]): string {
  const [command = '', ...args] = statement.split(' ')
  const masked = maskRedisArguments(command, args, (name) => redactor.isSecret(name))
  secrets.push(...masked.secrets)
  return [command, ...masked.args].join(' ')
}

/**
 * A statement recorded as the span contract's plain data (`{ system, statement, params, … }`,
 * raw: an OpenTelemetry span's, `fastify-kernel/opentelemetry`), read as a channel's call.
 */
function plainCall (data: Record<string, unknown>): SqlCall | undefined {
  if (typeof data.statement !== 'string') return undefined
  const context: SqlTraceContext = { query: data.statement, values: data.params }
  if (typeof data.database === 'string') context.database = data.database
  if (typeof data.rows === 'number') context.rows = data.rows
  return new SqlCall(context, String(data.system ?? 'sql'), String(data.driver ?? 'unknown'), undefined)
}

/** Raw call → the span's data: statement and parameters masked by the redaction policy, cut. */
export function formatDbSpan (span: Span, redactor: Redactor): void {
  const call = span.data instanceof SqlCall ? span.data : plainCall(span.data)
  if (call === undefined) return
  const { context } = call
  const secrets: string[] = []
  // a Redis command's passwords are no SQL literals: masked first, then the command read as one
  const query = call.system === 'redis' ? maskedRedisStatement(context.query, redactor, secrets) : context.query
  const analysis = analyzeSql(query, call.system)
  // a literal that is a URL with credentials (a DSN, a signed link) is masked as every URL is
  const statement = redactor.message(maskedStatement(query, analysis, redactor, secrets))
  const data: DbSpanData = { system: call.system, statement: truncate(statement), shape: truncate(analysis.shape), driver: call.driver }
  const params = maskedParams(context.values, analysis, redactor, secrets)
  if (params !== undefined) {
    data.params = params
    const runnable = runnableSql(query, analysis, call.system, context.values, secretSlots(analysis, redactor).test)
    if (runnable !== undefined) data.runnable = redactor.message(runnable)
  }
  // a server's error may quote the statement where it failed (MariaDB's `near '…'`)
  if (span.error !== undefined) {
    for (const secret of secrets) if (secret !== '') span.error = span.error.replaceAll(secret, REDACTED)
  }
  if (typeof context.prepared === 'string') data.prepared = truncate(context.prepared, MAX_NAME)
  const id = call.via === undefined || context.cut === true || !analysis.plainRead ? undefined : explainable(context.query, context.driverValues ?? context.values, call.system, call.via, secretValues(context.values, analysis, redactor))
  if (id !== undefined) data.explain = id
  const rows = rowsOf(context)
  if (rows !== undefined) data.rows = rows
  if (typeof context.database === 'string' && context.database !== '') data.database = context.database
  if (call.traffic !== undefined) {
    data.kernel = true
    data.purpose = call.traffic.purpose
  }
  span.name = truncate(statement, MAX_NAME)
  span.data = data as unknown as Record<string, unknown>
}
