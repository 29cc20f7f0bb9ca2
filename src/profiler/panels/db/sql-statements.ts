/**
 * Whether a statement is exactly one read, as the server itself would split it: a lexer of
 * each dialect's comments and quoting, written to the servers' own lexers (PostgreSQL's
 * `scan.l`, MySQL's and MariaDB's `sql_lex.cc`, SQLite's `tokenize.c`), used by EXPLAIN to refuse
 * anything else before it sends a byte. The protocol's single-statement forms guard beside it
 * (explain.ts): this is the second lock, not the only one.
 *
 * What a server's settings change (PostgreSQL's `standard_conforming_strings`, MySQL's
 * `NO_BACKSLASH_ESCAPES` and `ANSI_QUOTES`) is read every way it can be: a statement passes only
 * when each reading finds one read. Anything the lexer cannot be sure of (an unterminated string
 * or comment, MySQL's executable comments `/*! … *\/`, a NUL) is refused.
 *
 * Libraries measured for this (November 2026) and not used: dbgate-query-splitter 4.12 reads
 * PostgreSQL's `SELECT 1 --x\r; COMMIT; …` and MySQL's `SELECT 1 --1; COMMIT; …` as one
 * statement each (both are three); sql-parser-cst 0.42 reads the MySQL one as one statement too;
 * libpg-query is PostgreSQL's real parser (a WebAssembly build) but has no MySQL counterpart.
 */

export type SqlDialect = 'postgresql' | 'mysql' | 'sqlite'

/** The dialect of a database system's name (`postgresql`, `mariadb`…); undefined for one this lexer does not read. */
export function dialectOf (system: string): SqlDialect | undefined {
  const lower = system.toLowerCase()
  if (lower.startsWith('postgres') || lower === 'pg') return 'postgresql'
  if (lower === 'mysql' || lower === 'mariadb') return 'mysql'
  if (lower === 'sqlite' || lower === 'sqlite3') return 'sqlite'
  return undefined
}

/** How one reading of the text treats backslashes (a server setting decides it). */
interface Reading {
  /** `\` escapes in `'…'` (PostgreSQL with standard_conforming_strings off; MySQL by default) */
  backslashSingle: boolean
  /** `\` escapes in `"…"` (MySQL without ANSI_QUOTES: a string) */
  backslashDouble: boolean
  /** `$tag$…$tag$` is a string (PostgreSQL; MySQL 9's JavaScript routines) */
  dollar: boolean
}

interface Lexed {
  /** the statement's significant tokens: words upper-cased, `;`, other punctuation, `'` for a literal, `"` for a quoted name */
  tokens: string[]
  /** why the text cannot be read safely */
  problem?: string
}

const SPACE_PG = new Set([' ', '\t', '\n', '\r', '\f', '\v'])
const WORD_START = /[A-Za-z_\u0080-\uffff]/
const WORD_PG = /[A-Za-z0-9_$\u0080-\uffff]/
const WORD_MYSQL = /[A-Za-z0-9_$\u0080-\uffff]/
const DOLLAR_TAG = /^\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/

/** MySQL's `--` starts a comment only before a space or a control character (`--1` is minus minus one). */
function mysqlDashComment (sql: string, i: number): boolean {
  if (sql[i] !== '-' || sql[i + 1] !== '-') return false
  const next = sql.charCodeAt(i + 2)
  return Number.isNaN(next) || next <= 0x20 || next === 0x7f
}

/** Ends a quoted run opened at `i` by `quote`: doubled quotes, and backslash escapes when asked. -1 when unterminated. */
function quotedEnd (sql: string, i: number, quote: string, backslash: boolean): number {
  for (let j = i + 1; j < sql.length; j++) {
    const c = sql[j]
    if (backslash && c === '\\') { j++; continue }
    if (c === quote) {
      if (sql[j + 1] === quote) { j++; continue }
      return j + 1
    }
  }
  return -1
}

function lex (sql: string, dialect: SqlDialect, reading: Reading): Lexed {
  const tokens: string[] = []
  const n = sql.length
  const pg = dialect === 'postgresql'
  const mysql = dialect === 'mysql'
  let i = 0
  const fail = (problem: string): Lexed => ({ tokens, problem })
  while (i < n) {
    const c = sql[i]!
    if (c === '\0') return fail('it holds a NUL character')
    if (SPACE_PG.has(c) || (mysql && c.charCodeAt(0) < 0x20)) { i++; continue }
    // comments
    if (pg && c === '-' && sql[i + 1] === '-') {
      // PostgreSQL ends a `--` comment at a carriage return as at a line feed
      while (i < n && sql[i] !== '\n' && sql[i] !== '\r') i++
      continue
    }
    if (dialect === 'sqlite' && c === '-' && sql[i + 1] === '-') {
      while (i < n && sql[i] !== '\n') i++
      continue
    }
    if (mysql && (c === '#' || mysqlDashComment(sql, i))) {
      while (i < n && sql[i] !== '\n') i++
      continue
    }
    if (c === '/' && sql[i + 1] === '*') {
      if (mysql && (sql[i + 2] === '!' || (sql[i + 2] === 'M' && sql[i + 3] === '!'))) return fail('it holds an executable comment (/*! … */), which the server runs as code')
      if (pg) {
        // PostgreSQL's block comments nest
        let depth = 1
        let j = i + 2
        while (j < n && depth > 0) {
          if (sql[j] === '/' && sql[j + 1] === '*') { depth++; j += 2 } else if (sql[j] === '*' && sql[j + 1] === '/') { depth--; j += 2 } else j++
        }
        if (depth > 0) return fail('a comment is not closed')
        i = j
      } else {
        const close = sql.indexOf('*/', i + 2)
        if (close === -1) {
          // SQLite ends an unclosed comment at the end of the text; the others refuse it
          if (dialect !== 'sqlite') return fail('a comment is not closed')
          i = n
        } else {
          i = close + 2
        }
      }
      continue
    }
    // literals and quoted names
    if (c === '\'') {
      const end = quotedEnd(sql, i, '\'', reading.backslashSingle && dialect !== 'sqlite')
      if (end === -1) return fail('a string is not closed')
      tokens.push('\'')
      i = end
      continue
    }
    if (c === '"') {
      const end = quotedEnd(sql, i, '"', mysql && reading.backslashDouble)
      if (end === -1) return fail('a quoted name or string is not closed')
      tokens.push('"')
      i = end
      continue
    }
    if (c === '`' && dialect !== 'postgresql') {
      const end = quotedEnd(sql, i, '`', false)
      if (end === -1) return fail('a quoted name is not closed')
      tokens.push('"')
      i = end
      continue
    }
    if (c === '[' && dialect === 'sqlite') {
      const close = sql.indexOf(']', i + 1)
      if (close === -1) return fail('a quoted name is not closed')
      tokens.push('"')
      i = close + 1
      continue
    }
    if (reading.dollar && c === '$') {
      const tag = DOLLAR_TAG.exec(sql.slice(i, i + 256))?.[0]
      if (tag !== undefined) {
        const close = sql.indexOf(tag, i + tag.length)
        if (close === -1) return fail('a dollar-quoted string is not closed')
        tokens.push('\'')
        i = close + tag.length
        continue
      }
    }
    if (WORD_START.test(c)) {
      let j = i + 1
      const word = pg ? WORD_PG : WORD_MYSQL
      while (j < n && word.test(sql[j]!)) j++
      const text = sql.slice(i, j).toUpperCase()
      if (pg && sql[j] === '\'' && (text === 'E' || text === 'B' || text === 'X' || text === 'N')) {
        // E'…' takes backslash escapes whatever the setting
        const end = quotedEnd(sql, j, '\'', text === 'E' || reading.backslashSingle)
        if (end === -1) return fail('a string is not closed')
        tokens.push('\'')
        i = end
        continue
      }
      if (pg && text === 'U' && sql[j] === '&' && (sql[j + 1] === '\'' || sql[j + 1] === '"')) {
        const end = quotedEnd(sql, j + 1, sql[j + 1]!, false)
        if (end === -1) return fail('a string is not closed')
        tokens.push(sql[j + 1] === '\'' ? '\'' : '"')
        i = end
        continue
      }
      tokens.push(text)
      i = j
      continue
    }
    // numbers, operators, placeholders, punctuation: one character at a time is enough here
    tokens.push(c)
    i++
  }
  return { tokens }
}

/** Words that make a statement something else than a read, wherever they stand outside its strings and quoted names. */
const WRITES = new Set([
  'INSERT', 'UPDATE', 'DELETE', 'MERGE', 'UPSERT', 'INTO', 'CREATE', 'DROP', 'ALTER', 'TRUNCATE', 'GRANT', 'REVOKE', 'COPY',
  'OUTFILE', 'DUMPFILE', 'COMMIT', 'ROLLBACK', 'SAVEPOINT'
])

function problemOf (lexed: Lexed): string | undefined {
  if (lexed.problem !== undefined) return lexed.problem
  const tokens = lexed.tokens
  // a trailing `;` (and nothing but comments and spaces after it) is the end of the one statement
  let end = tokens.length
  while (end > 0 && tokens[end - 1] === ';') end--
  const body = tokens.slice(0, end)
  if (body.includes(';')) return 'it holds more than one statement'
  let first = 0
  while (body[first] === '(') first++
  if (body[first] !== 'SELECT' && body[first] !== 'WITH') return 'it does not start with SELECT or WITH'
  const write = body.find((token) => WRITES.has(token))
  if (write !== undefined) return `it holds ${write}, a word of a write or of a transaction`
  return undefined
}

function readings (dialect: SqlDialect): Reading[] {
  if (dialect === 'sqlite') return [{ backslashSingle: false, backslashDouble: false, dollar: false }]
  if (dialect === 'postgresql') return [false, true].map((backslashSingle) => ({ backslashSingle, backslashDouble: false, dollar: true }))
  const all: Reading[] = []
  for (const backslashSingle of [true, false]) {
    for (const backslashDouble of [true, false]) for (const dollar of [false, true]) all.push({ backslashSingle, backslashDouble, dollar })
  }
  return all
}

/**
 * Why `sql` is not exactly one read for a server of `system` (`it holds more than one
 * statement`, `it holds INSERT…`), or undefined when it is: one statement, starting with SELECT
 * or WITH (a parenthesised SELECT too), with none of the words of a write or a transaction
 * anywhere outside its strings and quoted names (so neither a data-modifying CTE, `SELECT …
 * INTO`, nor a locking `FOR UPDATE`), whichever way the server's settings read its backslashes.
 * Deliberately strict: a read it refuses is only not explained.
 */
export function singleReadProblem (sql: string, system: string): string | undefined {
  const dialect = dialectOf(system)
  if (dialect === undefined) return `the SQL of "${system}" is not read here`
  for (const reading of readings(dialect)) {
    const problem = problemOf(lex(sql, dialect, reading))
    if (problem !== undefined) return problem
  }
  return undefined
}

/** How many statements the server would find in `sql` (its default settings), or undefined when it cannot be read safely: for tests and diagnostics. */
export function statementCount (sql: string, system: string): number | undefined {
  const dialect = dialectOf(system)
  if (dialect === undefined) return undefined
  const lexed = lex(sql, dialect, readings(dialect)[0]!)
  if (lexed.problem !== undefined) return undefined
  let count = 0
  let open = false
  for (const token of lexed.tokens) {
    if (token === ';') { if (open) count++; open = false } else open = true
  }
  return count + (open ? 1 : 0)
}
