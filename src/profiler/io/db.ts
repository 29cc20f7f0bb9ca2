import type { KernelTraffic } from '../../kernel/async-context.js'
import type { Redactor } from '../../http/redact.js'
import { REDACTED, truncate } from '../../http/redact.js'
import type { Span } from '../spans.js'
import type { ChannelSubscription } from './channels.js'
import type { TracedContext } from './traced-call.js'
import { tracedCalls } from './traced-call.js'
import { analyzeSql } from './sql.js'
import { maskRedisArguments } from '../../redis/secret-arguments.js'
import type { SqlAnalysis } from './sql.js'

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
}

class SqlCall {
  constructor (readonly context: SqlTraceContext & TracedContext, readonly system: string, readonly driver: string, readonly traffic: KernelTraffic | undefined) {}
}

function sqlCalls (tracing: string, system: string | undefined, driver: string | undefined): ChannelSubscription {
  return tracedCalls<SqlTraceContext>(tracing, DB, (context, traffic) => typeof context.query === 'string'
    ? new SqlCall(context, system ?? String(context.system ?? 'sql'), driver ?? String(context.driver ?? 'unknown'), traffic)
    : undefined)
}

/** mysql2 (3.20 and later) publishes its queries and prepared statements; the app publishes the rest on DB_CHANNEL. */
export const dbChannels: readonly ChannelSubscription[] = [
  // a pool hands a freed connection to the next caller from the request that freed it
  { restore: 'mysql2:pool:connect' },
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

/** The parameters of a statement's secret slots (by their `$n`/`?` rank or `:name`). */
function secretSlots (analysis: SqlAnalysis, redactor: Redactor): { indexes: Set<number>, names: Set<string> } {
  const indexes = new Set<number>()
  const names = new Set<string>()
  for (const slot of analysis.slots) {
    if (slot.literal || slot.column === undefined || !redactor.isSecret(slot.column)) continue
    if (slot.index !== undefined) indexes.add(slot.index)
    if (slot.name !== undefined) names.add(slot.name)
  }
  return { indexes, names }
}

/** a positional parameter reported by name as its 0-based index (OpenTelemetry's `db.query.parameter.0`) */
const INDEX_NAME = /^(?:0|[1-9]\d{0,5})$/

/**
 * Secret by the name it is given (`:password`) or by the column it goes to (`password = ?`);
 * a parameter named by its index goes to the column of that rank.
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
  const statement = maskedStatement(query, analysis, redactor, secrets)
  const data: DbSpanData = { system: call.system, statement: truncate(statement), shape: truncate(analysis.shape), driver: call.driver }
  const params = maskedParams(context.values, analysis, redactor, secrets)
  if (params !== undefined) data.params = params
  // a server's error may quote the statement where it failed (MariaDB's `near '…'`)
  if (span.error !== undefined) {
    for (const secret of secrets) if (secret !== '') span.error = span.error.replaceAll(secret, REDACTED)
  }
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
