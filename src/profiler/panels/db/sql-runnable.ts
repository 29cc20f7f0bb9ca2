import { REDACTED } from '../../../http/redact.js'
import type { SqlAnalysis, SqlSlot } from './sql.js'

/**
 * The runnable form of a statement (Doctrine's "View runnable query"): its placeholders replaced
 * by its values written as literals of its dialect — pg's `$1`, MySQL's `?` and `:name`,
 * SQLite's `?`, `?NNN`, `:name`, `@name` and `$name` — so that it can be pasted into psql, the
 * mysql client or sqlite3. A secret value stays masked (`'******'`): the form is shown, never
 * a way around the redaction policy.
 */

/** Longer than this, the runnable form is not kept (the statement and its parameters still are). */
export const MAX_RUNNABLE = 64 * 1024

const PLACEHOLDERS: Record<string, RegExp> = {
  postgresql: /^\$\d+$/,
  mysql: /^(\?|:\w+)$/,
  mariadb: /^(\?|:\w+)$/,
  sqlite: /^(\?\d*|[:@$]\w+)$/
}

const MYSQL_ESCAPES: Record<string, string> = { '\0': '\\0', '\b': '\\b', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\x1a': '\\Z', '"': '\\"', '\'': '\\\'', '\\': '\\\\' }

function quote (text: string, system: string): string {
  // eslint-disable-next-line no-control-regex -- the characters MySQL escapes (sqlstring's list)
  if (system === 'mysql' || system === 'mariadb') return `'${text.replace(/[\0\b\t\n\r\x1a"'\\]/g, (c) => MYSQL_ESCAPES[c]!)}'`
  // PostgreSQL (standard_conforming_strings, its default since 9.1) and SQLite: only the quote doubled
  return `'${text.replaceAll('\'', '\'\'')}'`
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0')

/** mysql2 writes a Date in the connection's local time, as MySQL's DATETIME reads it. */
function mysqlDate (date: Date): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`
}

/** One value as a literal of `system`. */
export function sqlLiteral (value: unknown, system: string): string {
  const mysql = system === 'mysql' || system === 'mariadb'
  if (value === null || value === undefined) return 'NULL'
  if (typeof value === 'boolean') return system === 'postgresql' ? (value ? 'TRUE' : 'FALSE') : system === 'sqlite' ? (value ? '1' : '0') : String(value)
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : quote(String(value), system)
  if (typeof value === 'bigint') return String(value)
  if (typeof value === 'string') return quote(value, system)
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return 'NULL'
    return quote(mysql ? mysqlDate(value) : value.toISOString(), system)
  }
  if (value instanceof Uint8Array) {
    const hex = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')
    return system === 'postgresql' ? `'\\x${hex}'::bytea` : `X'${hex}'`
  }
  if (Array.isArray(value)) {
    // pg binds an array as an array; mysql2 expands it into a list, as its own formatting does
    if (system === 'postgresql') return value.length === 0 ? '\'{}\'' : `ARRAY[${value.map((item) => sqlLiteral(item, system)).join(', ')}]`
    if (mysql) return value.map((item) => Array.isArray(item) ? `(${sqlLiteral(item, system)})` : sqlLiteral(item, system)).join(', ')
  }
  let json: string | undefined
  try {
    json = JSON.stringify(value)
  } catch {
    // a cycle, or a BigInt inside
  }
  return quote(json ?? String(value), system)
}

/** The value a placeholder stands for: `[found, value]`. */
function valueOf (slot: SqlSlot, values: unknown): [boolean, unknown] {
  if (slot.index !== undefined) {
    if (Array.isArray(values)) return [slot.index < values.length, values[slot.index]]
    if (typeof values === 'object' && values !== null) {
      const key = String(slot.index + 1)
      return [key in values, (values as Record<string, unknown>)[key]]
    }
    return [false, undefined]
  }
  if (slot.name !== undefined && typeof values === 'object' && values !== null && !Array.isArray(values)) {
    return [slot.name in values, (values as Record<string, unknown>)[slot.name]]
  }
  return [false, undefined]
}

/**
 * `sql` with every placeholder of its dialect replaced by its value's literal (a secret one as
 * `'******'`, as a secret literal already there: `secret` tells both); undefined when it has no
 * placeholder to replace, or would be longer than MAX_RUNNABLE.
 */
export function runnableSql (sql: string, analysis: SqlAnalysis, system: string, values: unknown, secret: (slot: SqlSlot) => boolean): string | undefined {
  if (values === undefined || values === null) return undefined
  const placeholder = PLACEHOLDERS[system]
  let out = ''
  let at = 0
  let replaced = 0
  for (const slot of analysis.slots) {
    if (slot.literal) {
      // a literal the statement carries for a secret column (`password = 'x'`): masked, as in the statement shown
      if (secret(slot)) {
        out += `${sql.slice(at, slot.start)}'${REDACTED}'`
        at = slot.end
      }
      continue
    }
    if (placeholder !== undefined && !placeholder.test(sql.slice(slot.start, slot.end))) continue
    const [found, value] = valueOf(slot, values)
    if (!found) continue
    out += sql.slice(at, slot.start) + (secret(slot) ? `'${REDACTED}'` : sqlLiteral(value, system))
    at = slot.end
    replaced++
    if (out.length > MAX_RUNNABLE) return undefined
  }
  if (replaced === 0) return undefined
  out += sql.slice(at)
  return out.length > MAX_RUNNABLE ? undefined : out
}
