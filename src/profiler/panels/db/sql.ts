/**
 * Just enough of SQL's lexical structure to show a statement safely and to compare statements:
 * where its values are (literals and placeholders), which column each one is compared with or
 * inserted into, and its shape (the statement with its literal values taken out). No parser:
 * statements of any dialect are read the same way, and what is not understood is left as is.
 * (No maintained package does this for Node; OpenTelemetry's and Datadog's obfuscators live in
 * other languages.)
 */

import { singleReadProblem } from './sql-statements.js'

type TokenType = 'word' | 'ident' | 'string' | 'number' | 'placeholder' | 'op' | 'open' | 'close' | 'comma' | 'other'

interface Token {
  type: TokenType
  start: number
  end: number
}

/** A value of a statement: a literal (`'x'`, `42`) or a placeholder (`?`, `$1`, `:name`). */
export interface SqlSlot {
  start: number
  end: number
  literal: boolean
  /** the column it is compared with, set to or inserted into, when the statement says (`password = ?`) */
  column?: string
  /** `$2` → 1; `?` → its rank among the `?`s */
  index?: number
  /** `:name` → `name` */
  name?: string
}

export interface SqlAnalysis {
  slots: SqlSlot[]
  /** the statement with its literal values replaced by `?`, lists of values collapsed, spaces normalised */
  shape: string
  /** a plain read that EXPLAIN may be asked of (see isPlainRead) */
  plainRead: boolean
}

const WORD_START = /[A-Za-z_\u0080-\uffff]/
const WORD = /[\w$.\u0080-\uffff]/
const DIGIT = /[0-9]/
const COMPARISON = new Set(['=', '<>', '!=', '<', '>', '<=', '>=', '<=>'])
/** `col LIKE v`; PostgreSQL's `SET name TO v` */
const COMPARISON_WORDS = new Set(['LIKE', 'ILIKE', 'BY', 'TO'])
/** PostgreSQL's `set_config('name', value, local)`: the value is the setting's, named by the first argument */
const SET_CONFIG = 'SET_CONFIG'
/** after `INTO`, a word before `(` that is no table name */
const NOT_A_TABLE = new Set(['VALUES', 'VALUE', 'SELECT'])

/** a string's prefix glued to its quote: PostgreSQL's `E'…'` (backslash escapes), `N'…'`, `X'…'`, `B'…'`, MySQL's `_utf8mb4'…'` */
const STRING_PREFIX = /^(?:[EeNnXxBb]|_\w+)$/
/** PostgreSQL's dollar quote's opening tag: `$$`, `$body$` */
const DOLLAR_TAG = /^\$(?:[A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*)?\$/

function tokenize (sql: string, mysql: boolean, postgres: boolean): Token[] {
  const tokens: Token[] = []
  let i = 0
  const n = sql.length
  const quoted = (quote: string, backslash: boolean): number => {
    let j = i + 1
    while (j < n) {
      const c = sql[j]
      if (backslash && c === '\\') { j += 2; continue }
      if (c === quote) {
        if (sql[j + 1] === quote) { j += 2; continue }
        return j + 1
      }
      j++
    }
    return n
  }
  while (i < n) {
    const c = sql[i]!
    const start = i
    if (/\s/.test(c)) { i++; continue }
    if ((c === '-' && sql[i + 1] === '-') || (mysql && c === '#')) {
      while (i < n && sql[i] !== '\n') i++
      continue
    }
    if (c === '/' && sql[i + 1] === '*') {
      const close = sql.indexOf('*/', i + 2)
      i = close === -1 ? n : close + 2
      continue
    }
    let type: TokenType
    if (c === '\'') {
      i = quoted('\'', mysql); type = 'string'
    } else if (c === '"') {
      i = quoted('"', mysql); type = mysql ? 'string' : 'ident'
    } else if (c === '`') {
      i = quoted('`', false); type = 'ident'
    } else if (DIGIT.test(c) || (c === '.' && DIGIT.test(sql[i + 1] ?? ''))) {
      i++
      while (i < n && /[0-9a-fA-FxX._]/.test(sql[i]!)) i++
      if ((sql[i] === '+' || sql[i] === '-') && /[eE]/.test(sql[i - 1]!)) { i++; while (i < n && DIGIT.test(sql[i]!)) i++ }
      type = 'number'
    } else if (c === '?') {
      // SQLite's `?NNN`
      i++; while (i < n && DIGIT.test(sql[i]!)) i++; type = 'placeholder'
    } else if (postgres && c === '$' && DOLLAR_TAG.test(sql.slice(i, i + 64))) {
      const tag = DOLLAR_TAG.exec(sql.slice(i, i + 64))![0]
      const close = sql.indexOf(tag, i + tag.length)
      i = close === -1 ? n : close + tag.length; type = 'string'
    } else if (c === '$' && DIGIT.test(sql[i + 1] ?? '')) {
      i++; while (i < n && DIGIT.test(sql[i]!)) i++; type = 'placeholder'
    } else if ((c === ':' || c === '@' || c === '$') && WORD_START.test(sql[i + 1] ?? '') && sql[i - 1] !== ':') {
      i++; while (i < n && /\w/.test(sql[i]!)) i++; type = 'placeholder'
    } else if (WORD_START.test(c)) {
      i++; while (i < n && WORD.test(sql[i]!)) i++; type = 'word'
      const prefix = sql.slice(start, i)
      if (sql[i] === '\'' && STRING_PREFIX.test(prefix)) {
        i = quoted('\'', mysql || prefix === 'E' || prefix === 'e'); type = 'string'
      } else if (postgres && (prefix === 'U' || prefix === 'u') && sql[i] === '&' && sql[i + 1] === '\'') {
        i++; i = quoted('\'', false); type = 'string'
      }
    } else if (/[<>=!]/.test(c)) {
      i++; while (i < n && /[<>=!]/.test(sql[i]!)) i++; type = 'op'
    } else {
      i++
      type = c === '(' ? 'open' : c === ')' ? 'close' : c === ',' ? 'comma' : 'other'
    }
    tokens.push({ type, start, end: i })
  }
  return tokens
}

function isMysql (system: string): boolean {
  return system === 'mysql' || system === 'mariadb'
}

/**
 * Whether a statement is a plain read that EXPLAIN may be asked of: exactly one statement,
 * starting with SELECT or WITH, no word of a write or a transaction outside its strings and
 * quoted names, read by its dialect's own lexer (sql-statements.ts). Deliberately strict: a read
 * it refuses is only not explained.
 */
export function isPlainRead (sql: string, system = 'mysql'): boolean {
  return singleReadProblem(sql, system) === undefined
}

function columnName (sql: string, token: Token | undefined): string | undefined {
  if (token === undefined || (token.type !== 'word' && token.type !== 'ident')) return undefined
  let text = sql.slice(token.start, token.end)
  if (token.type === 'ident') text = text.slice(1, -1)
  const dot = text.lastIndexOf('.')
  return dot === -1 ? text : text.slice(dot + 1)
}

/** functions whose arguments are passwords: MySQL's and MariaDB's `PASSWORD('…')`, `OLD_PASSWORD('…')` */
const PASSWORD_FUNCTIONS = new Set(['PASSWORD', 'OLD_PASSWORD'])
/** the words right before a password: `[ENCRYPTED] PASSWORD '…'` (PostgreSQL's roles, MySQL's `IDENTIFIED BY PASSWORD '…'`, a foreign server's options), MySQL's `REPLACE '<current password>'` */
const BEFORE_PASSWORD = new Set(['PASSWORD', 'REPLACE'])
/** `IDENTIFIED BY '…'`, `IDENTIFIED WITH <plugin> BY|AS '…'`, `IDENTIFIED VIA <plugin> USING '…'` */
const IDENTIFIED_HOW = new Set(['WITH', 'VIA'])
const IDENTIFIED_BY = new Set(['BY', 'AS', 'USING'])
/** the column name a password goes to, for the redaction policy */
const PASSWORD = 'password'

/**
 * The values of a statement and the column of each (`col = v`, `col LIKE v`, `col IN (v, …)`,
 * `INSERT … (a, b) VALUES (v, v)`), and its shape. Passwords are values of the `password` column
 * wherever the statement sets one: `IDENTIFIED [WITH plugin] BY|AS v`, `IDENTIFIED VIA plugin
 * USING v`, `[ENCRYPTED] PASSWORD v`, `PASSWORD(v)`, everything after `SET PASSWORD … =`, MySQL's
 * `REPLACE v` (docs/security.md lists the forms).
 */
export function analyzeSql (sql: string, system = 'mysql'): SqlAnalysis {
  const tokens = tokenize(sql, isMysql(system), system.startsWith('postgres'))
  const word = (token: Token | undefined): string => token !== undefined && token.type === 'word' ? sql.slice(token.start, token.end).toUpperCase() : ''
  const slots: SqlSlot[] = []
  let questionMarks = 0
  // the column every value of a parenthesised list stands for: `col IN (…)`, a password
  // function's arguments, or INSERT's columns by position
  const lists: Array<{ column?: string, columns?: Array<string | undefined>, position: number }> = []
  let insertColumns: Array<string | undefined> | undefined
  let collecting: Array<string | undefined> | undefined
  // the statement's first words (`SET PASSWORD`), and whether its `=` has come: what follows is the password
  let first: string[] = []
  let passwordAfterEquals = false
  let passwordsFollow = false
  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k]!
    const previous = tokens[k - 1]
    if (token.type === 'other' && sql[token.start] === ';') {
      first = []
      passwordAfterEquals = passwordsFollow = false
      continue
    }
    if (first.length < 2 && token.type === 'word') {
      first.push(word(token))
      passwordAfterEquals = first[0] === 'SET' && first[1] === 'PASSWORD'
    }
    if (passwordAfterEquals && token.type === 'op' && sql.slice(token.start, token.end) === '=') passwordsFollow = true
    if (token.type === 'open') {
      const keyword = word(previous)
      const enclosing = lists.at(-1)
      if (PASSWORD_FUNCTIONS.has(keyword) || enclosing?.column === PASSWORD) {
        lists.push({ column: PASSWORD, position: 0 })
      } else if (keyword === SET_CONFIG) {
        // set_config('app.password', '…', false): the second argument is the setting's value
        const name = tokens[k + 1]
        lists.push({ columns: [undefined, name?.type === 'string' ? sql.slice(name.start, name.end).replace(/^[A-Za-z]?'|'$/g, '') : undefined], position: 0 })
      } else if (keyword === 'IN' || (keyword === 'NOT' && word(tokens[k + 1]) === 'IN')) {
        lists.push({ column: columnName(sql, tokens[k - 2]), position: 0 })
      } else if (insertColumns === undefined && collecting === undefined && word(tokens[k - 2]) === 'INTO' && (previous?.type === 'ident' || (previous?.type === 'word' && !NOT_A_TABLE.has(keyword)))) {
        collecting = []
        lists.push({ position: 0 })
      } else if (insertColumns !== undefined && (keyword === 'VALUES' || keyword === 'VALUE' || previous?.type === 'comma')) {
        lists.push({ columns: insertColumns, position: 0 })
      } else {
        lists.push({ position: 0 })
      }
      continue
    }
    if (token.type === 'close') {
      if (collecting !== undefined && lists.length === 1) { insertColumns = collecting; collecting = undefined }
      lists.pop()
      continue
    }
    if (token.type === 'comma') {
      const list = lists.at(-1)
      if (list !== undefined) list.position++
      continue
    }
    if (collecting !== undefined && lists.length === 1) {
      collecting[lists[0]!.position] = columnName(sql, token)
      continue
    }
    if (token.type !== 'string' && token.type !== 'number' && token.type !== 'placeholder') continue
    const slot: SqlSlot = { start: token.start, end: token.end, literal: token.type !== 'placeholder' }
    const list = lists.at(-1)
    const before = word(previous)
    const operator = previous?.type === 'op' ? sql.slice(previous.start, previous.end) : before
    if (passwordsFollow || BEFORE_PASSWORD.has(before) || (IDENTIFIED_BY.has(before) && identified(tokens, k, word))) {
      slot.column = PASSWORD
    } else if (COMPARISON.has(operator) || COMPARISON_WORDS.has(operator)) {
      slot.column = operator === 'BY' ? undefined : columnName(sql, tokens[k - 2])
    } else if (list?.column !== undefined) {
      slot.column = list.column
    } else if (list?.columns !== undefined) {
      slot.column = list.columns[list.position]
    }
    if (token.type === 'placeholder') {
      const text = sql.slice(token.start, token.end)
      if (text === '?') slot.index = questionMarks++
      else if ((text[0] === '$' || text[0] === '?') && DIGIT.test(text[1]!)) slot.index = Number(text.slice(1)) - 1
      else slot.name = text.slice(1)
    }
    if (slot.column === undefined) delete slot.column
    slots.push(slot)
  }
  return { slots, shape: shapeOf(sql, tokens), plainRead: isPlainRead(sql, system) }
}

/** The value at `k` follows `IDENTIFIED BY`, or `IDENTIFIED WITH|VIA <plugin> BY|AS|USING`. */
function identified (tokens: readonly Token[], k: number, word: (token: Token | undefined) => string): boolean {
  return word(tokens[k - 2]) === 'IDENTIFIED' || (IDENTIFIED_HOW.has(word(tokens[k - 3])) && word(tokens[k - 4]) === 'IDENTIFIED')
}

const LIST_OF_VALUES = /\(\s*\?(?:\s*,\s*\?)+\s*\)/g
const REPEATED_TUPLES = /\(…\)(?:\s*,\s*\(…\))+/g

function shapeOf (sql: string, tokens: readonly Token[]): string {
  let out = ''
  let last: Token | undefined
  for (const token of tokens) {
    const text = token.type === 'string' || token.type === 'number' ? '?' : sql.slice(token.start, token.end)
    const glued = last === undefined || token.type === 'close' || token.type === 'comma' || last.type === 'open'
    out += glued ? text : ` ${text}`
    last = token
  }
  // `IN (1, 2, 3)` and `IN (4, 5)`, or a multi-row INSERT, are one shape
  return out.replace(LIST_OF_VALUES, '(…)').replace(REPEATED_TUPLES, '(…)')
}
