import { isBuiltin } from 'node:module'
import { currentKernelContext, kernelTrafficOf } from '../../../kernel/async-context.js'
import { spansOf } from '../../spans.js'
import type { ChannelSubscription } from '../../instrument/channels.js'
import type { ModuleInstrumentation } from '../../instrument/modules.js'
import type { InstrumentedCopy } from '../../instrument/notices.js'
import { wrapMethod } from '../../instrument/patch.js'
import { DB, SqlCall, startSql } from './capture.js'
import type { SqlTraceContext } from './capture.js'
import type { TracedContext } from '../../instrument/traced-call.js'

/**
 * SQLite. better-sqlite3 publishes nothing (its `verbose` option gets the SQL alone, without
 * values or time): while a profiler is alive the app's copy is instrumented, its Statement's
 * `run`, `get`, `all`, `iterate` (and `bind`, whose values they use) and `Database#exec`.
 * `node:sqlite` is not in Node 20; a Node whose `node:sqlite` publishes the `sqlite.db.query`
 * channel (nodejs/node#62241) is heard on it.
 */

/** Whether this Node has `node:sqlite` (22.5 and later; not Node 20). */
export const hasNodeSqlite = isBuiltin('node:sqlite')

interface Statement {
  source: string
  reader?: boolean
  database: { name?: string }
}

/** The values a statement was bound to once and for all (`stmt.bind(...)`). */
const bound = new WeakMap<object, unknown[]>()

/**
 * better-sqlite3's arguments, as its binding reads them: positional values (arrays flattened) and
 * objects of named ones. One list of positionals, or one object of names, or both in one object
 * (positions as `1`, `2`…).
 */
function valuesOf (args: readonly unknown[]): unknown {
  const positional: unknown[] = []
  let named: Record<string, unknown> | undefined
  const take = (value: unknown): void => {
    if (Array.isArray(value)) for (const item of value) take(item)
    else if (typeof value === 'object' && value !== null && !(value instanceof Uint8Array) && !(value instanceof Date)) named = { ...named, ...value as Record<string, unknown> }
    else positional.push(value)
  }
  for (const arg of args) take(arg)
  if (named === undefined) return positional.length === 0 ? undefined : positional
  if (positional.length === 0) return named
  return { ...Object.fromEntries(positional.map((value, index) => [String(index + 1), value])), ...named }
}

function contextOf (statement: Statement, args: readonly unknown[]): SqlTraceContext & TracedContext {
  const given = args.length === 0 ? (bound.get(statement) ?? args) : args
  const context: SqlTraceContext & TracedContext = { query: statement.source, values: valuesOf(given), driverValues: given }
  const name = statement.database?.name
  if (typeof name === 'string') context.database = name
  return context
}

type Method = (this: Statement, ...args: unknown[]) => unknown

/** run/get/all: synchronous, their result (rows, `changes`) known at once. */
function timed (method: 'run' | 'get' | 'all'): (original: Method) => Method {
  return (original) => function (this: Statement, ...args: unknown[]) {
    if (currentKernelContext() === undefined) return original.apply(this, args)
    const context = contextOf(this, args)
    const span = startSql(context, 'sqlite', 'better-sqlite3', { kind: 'sqlite', handle: this.database })
    if (span === undefined) return original.apply(this, args)
    try {
      const result = original.apply(this, args)
      if (method === 'get') context.rows = result === undefined ? 0 : 1
      context.result = result
      span.end()
      return result
    } catch (error) {
      context.error = error
      span.fail(error)
      throw error
    }
  }
}

/** iterate: over when its iterator is (done, returned early, or failed). */
function iterated (original: Method): Method {
  return function (this: Statement, ...args: unknown[]) {
    if (currentKernelContext() === undefined) return original.apply(this, args)
    const context = contextOf(this, args)
    const span = startSql(context, 'sqlite', 'better-sqlite3', { kind: 'sqlite', handle: this.database })
    if (span === undefined) return original.apply(this, args)
    let iterator: Iterator<unknown> & { return?: (...a: unknown[]) => IteratorResult<unknown> }
    try {
      iterator = original.apply(this, args) as typeof iterator
    } catch (error) {
      span.fail(error)
      throw error
    }
    let rows = 0
    const next = iterator.next
    const stop = iterator.return
    const end = (): void => { context.rows = rows; span.end() }
    iterator.next = function (...a: unknown[]) {
      try {
        const step = next.apply(this, a as [])
        if (step.done === true) end()
        else rows++
        return step
      } catch (error) {
        span.fail(error)
        throw error
      }
    }
    if (typeof stop === 'function') {
      iterator.return = function (...a: unknown[]) {
        end()
        return stop.apply(this, a)
      }
    }
    return iterator
  }
}

function remembersBinding (original: Method): Method {
  return function (this: Statement, ...args: unknown[]) {
    const result = original.apply(this, args)
    bound.set(this, args)
    return result
  }
}

interface Database {
  name?: string
  exec: (sql: string) => unknown
}

function executes (original: (this: Database, sql: string) => unknown): (this: Database, sql: string) => unknown {
  return function (this: Database, sql: string) {
    if (currentKernelContext() === undefined || typeof sql !== 'string') return original.call(this, sql)
    const context: SqlTraceContext & TracedContext = { query: sql }
    if (typeof this.name === 'string') context.database = this.name
    const span = startSql(context, 'sqlite', 'better-sqlite3')
    if (span === undefined) return original.call(this, sql)
    try {
      const result = original.call(this, sql)
      span.end()
      return result
    } catch (error) {
      span.fail(error)
      throw error
    }
  }
}

/** What the instrumentation wraps of better-sqlite3's Statement (with `Database#exec`). */
const STATEMENT_METHODS = ['run', 'get', 'all', 'iterate', 'bind'] as const

/**
 * The better-sqlite3 versions the instrumentation is written for (the suite runs 13; .ci/matrix.sh
 * runs sqlite.test.ts against both ends: 13 on Node 24, 12.x on Node 22). Every 12.x builds on
 * Node 24, but may abort the process there (`Assertion failed: (env) != nullptr` in
 * node::RemoveEnvironmentCleanupHook, from its Statement destructor: the raw node::ObjectWrap
 * Node 24 changed, gone in 13): measured on Node 24, 12.0.0 to 12.6.2 aborted sqlite.test.ts in
 * every run, 12.8.0 in 1 of 2, 12.11.1 in 1 of 3; 13.2.0 never. Nothing points at the capture,
 * so the floor stays and the 12.x end is tested on Node 22, where 12 holds.
 */
export const BETTER_SQLITE3_VERSIONS = '>=12.0.0 <14'

/** The throwaway database and statement of each instrumented copy (see instrumentBetterSqlite3). */
const SCRATCH: object[] = []

/** Instruments one copy of better-sqlite3 (its export: the Database class). */
function instrumentBetterSqlite3 (exports: unknown, copy: InstrumentedCopy): (() => void) | undefined {
  if (typeof exports !== 'function') {
    copy.lacks(['Database'], 'the statements a unit runs')
    return undefined
  }
  const Database = exports as unknown as new (file: string) => { prepare: (sql: string) => object, close: () => void }
  // the Statement class is the native addon's: reached through a statement of a throwaway database
  const scratch = new Database(':memory:')
  let statement: object
  try {
    const prepared = scratch.prepare('SELECT 1')
    statement = Object.getPrototypeOf(prepared) as object
    // kept referenced for the process's life (a few hundred bytes): better-sqlite3 12 built for
    // Node 24 aborts the process when V8 collects one of its objects outside a JavaScript context
    // (node::RemoveEnvironmentCleanupHook's assertion, upstream), so the kernel leaves none of its
    // own for the collector
    SCRATCH.push(scratch, prepared)
  } finally {
    scratch.close()
  }
  const methods = statement as Record<string, unknown>
  const lacking = [
    ...STATEMENT_METHODS.filter((name) => typeof methods[name] !== 'function').map((name) => `Statement#${name}`),
    ...(typeof (exports as { prototype?: Record<string, unknown> }).prototype?.exec !== 'function' ? ['Database#exec'] : [])
  ]
  if (lacking.length > 0) {
    copy.lacks(lacking, 'the statements a unit runs')
    return undefined
  }
  const undo = [
    wrapMethod(statement, 'run', timed('run') as never),
    wrapMethod(statement, 'get', timed('get') as never),
    wrapMethod(statement, 'all', timed('all') as never),
    wrapMethod(statement, 'iterate', iterated as never),
    wrapMethod(statement, 'bind', remembersBinding as never),
    wrapMethod((exports as { prototype: object }).prototype, 'exec', executes as never)
  ]
  return () => { for (const restore of undo.reverse()) restore() }
}

export const betterSqlite3Instrumentation: ModuleInstrumentation = {
  name: 'better-sqlite3',
  files: ['/better-sqlite3/lib/index.js'],
  versions: BETTER_SQLITE3_VERSIONS,
  instrument: instrumentBetterSqlite3
}

/**
 * `sqlite.db.query`: SQLite's trace of each statement run, as the text it ran (values written
 * in), published when it starts: the span has no time of its own.
 */
export const sqliteChannels: readonly ChannelSubscription[] = [{
  name: 'sqlite.db.query',
  handler (message: unknown) {
    const unit = currentKernelContext()
    const spans = spansOf(unit)
    if (spans === undefined) return
    const text = typeof message === 'string' ? message : (message as { sql?: unknown, expandedSQL?: unknown, query?: unknown } | null)?.sql ?? (message as { query?: unknown } | null)?.query
    if (typeof text !== 'string') return
    const database = (message as { database?: unknown } | null)?.database
    const context: SqlTraceContext = { query: text }
    if (typeof database === 'string') context.database = database
    spans.start(DB, DB, new SqlCall(context, 'sqlite', 'node:sqlite', kernelTrafficOf(unit!)) as unknown as Record<string, unknown>).end()
  }
}]
