import { channel } from 'node:diagnostics_channel'
import { isBuiltin } from 'node:module'
import { currentKernelContext, kernelTrafficOf, outsideUnits } from '../../../kernel/async-context.js'
import { spansOf } from '../../spans.js'
import type { ChannelSubscription } from '../../instrument/channels.js'
import type { ModuleInstrumentation } from '../../instrument/modules.js'
import type { InstrumentedCopy } from '../../instrument/notices.js'
import { wrapMethod } from '../../instrument/patch.js'
import { DB, SqlCall, startSql } from './capture.js'
import type { SqlTraceContext } from './capture.js'
import type { TracedContext } from '../../instrument/traced-call.js'
import { ProcessShare } from '../../instrument/process-share.js'
import type { ExplainVia } from './explain.js'

/**
 * SQLite. better-sqlite3 publishes nothing (its `verbose` option gets the SQL alone, without
 * values or time): while a profiler is alive the app's copy is instrumented, its Statement's
 * `run`, `get`, `all`, `iterate` (and `bind`, whose values they use) and `Database#exec`.
 * `node:sqlite` is not in Node 20; a Node whose `node:sqlite` publishes the `sqlite.db.query`
 * channel (nodejs/node#62241, Node 26) is heard on it, and before it (Node 22 to 25) the app's
 * `DatabaseSync` statements are instrumented the same way as better-sqlite3's.
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

/** A driver's statements: how a call is read, and what it is explained through. */
interface SqliteDriver {
  name: string
  context: (statement: Statement, args: readonly unknown[]) => SqlTraceContext & TracedContext
  via: (statement: Statement) => ExplainVia | undefined
}

const betterSqlite3: SqliteDriver = {
  name: 'better-sqlite3',
  context: contextOf,
  via: (statement) => ({ kind: 'sqlite', handle: statement.database })
}

/** run/get/all: synchronous, their result (rows, `changes`) known at once. */
function timed (method: 'run' | 'get' | 'all', driver: SqliteDriver = betterSqlite3): (original: Method) => Method {
  return (original) => function (this: Statement, ...args: unknown[]) {
    if (currentKernelContext() === undefined) return original.apply(this, args)
    const context = driver.context(this, args)
    const span = startSql(context, 'sqlite', driver.name, driver.via(this))
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
function iterated (original: Method, driver: SqliteDriver = betterSqlite3): Method {
  return function (this: Statement, ...args: unknown[]) {
    if (currentKernelContext() === undefined) return original.apply(this, args)
    const context = driver.context(this, args)
    const span = startSql(context, 'sqlite', driver.name, driver.via(this))
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

function executes (original: (this: Database, sql: string) => unknown, driver = 'better-sqlite3', nameOf: (database: Database) => unknown = (database) => database.name): (this: Database, sql: string) => unknown {
  return function (this: Database, sql: string) {
    if (currentKernelContext() === undefined || typeof sql !== 'string') return original.call(this, sql)
    const context: SqlTraceContext & TracedContext = { query: sql }
    const name = nameOf(this)
    if (typeof name === 'string') context.database = name
    const span = startSql(context, 'sqlite', driver)
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

/** What the instrumentation reads of node:sqlite. */
interface NodeSqlite {
  DatabaseSync: new (path: string) => { exec: (sql: string) => unknown, close: () => void }
  StatementSync: { prototype: object }
}

/** The database a node:sqlite statement was prepared on (a StatementSync does not say). */
const preparedOn = new WeakMap<object, { location?: () => unknown }>()

/** A node:sqlite database's file (`location()`: null for `:memory:`). */
function locationOf (database: { location?: () => unknown } | undefined): string {
  try {
    const location = database?.location?.()
    return typeof location === 'string' && location !== '' ? location : ':memory:'
  } catch {
    // closed
    return ':memory:'
  }
}

const nodeSqliteDriver: SqliteDriver = {
  name: 'node:sqlite',
  context (statement, args) {
    const context: SqlTraceContext & TracedContext = { query: String((statement as { sourceSQL?: unknown }).sourceSQL ?? ''), values: valuesOf(args), driverValues: args }
    context.database = locationOf(preparedOn.get(statement))
    return context
  },
  via: () => undefined
}

/** Whether this node:sqlite publishes `sqlite.db.query` (Node 26 and later): a statement of a throwaway database, outside any unit. */
function publishesQueries (sqlite: NodeSqlite): boolean {
  const queries = channel('sqlite.db.query')
  let heard = false
  const probe = (): void => { heard = true }
  queries.subscribe(probe)
  try {
    outsideUnits(() => {
      const scratch = new sqlite.DatabaseSync(':memory:')
      try {
        scratch.exec('SELECT 1')
      } finally {
        scratch.close()
      }
    })
  } finally {
    queries.unsubscribe(probe)
  }
  return heard
}

/**
 * Whether Node has loaded node:sqlite. Its list of loaded modules only grows, and is asked at
 * each unit's start until node:sqlite is in it: only the entries added since the last look are
 * read (the whole list, some 300 names, cost every request 2 µs).
 */
let moduleListRead = 0
function nodeSqliteLoaded (): boolean {
  const list = (process as { moduleLoadList?: readonly string[] }).moduleLoadList
  if (list === undefined) return false
  for (; moduleListRead < list.length; moduleListRead++) if (list[moduleListRead] === 'NativeModule sqlite') return true
  return false
}

/** node:sqlite, when the app loaded it (loading it on Node 22 prints an ExperimentalWarning: never done for the app). */
function loadedNodeSqlite (): NodeSqlite | undefined {
  if (!hasNodeSqlite) return undefined
  if (!nodeSqliteLoaded()) return undefined
  return (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule?.('node:sqlite') as NodeSqlite | undefined
}

/** node:sqlite instrumented (undefined: not yet seen loaded; null: it publishes, nothing to do) */
let nodeSqliteUndo: Array<() => void> | null | undefined

function instrumentNodeSqlite (): void {
  if (nodeSqliteUndo !== undefined) return
  const sqlite = loadedNodeSqlite()
  if (sqlite === undefined) return
  if (publishesQueries(sqlite)) {
    nodeSqliteUndo = null
    return
  }
  const statement = sqlite.StatementSync.prototype
  const database = (sqlite.DatabaseSync as unknown as { prototype: object }).prototype
  nodeSqliteUndo = [
    wrapMethod(database, 'prepare', ((original: (this: object, ...args: unknown[]) => unknown) => function (this: object, ...args: unknown[]) {
      const prepared = original.apply(this, args)
      if (typeof prepared === 'object' && prepared !== null) preparedOn.set(prepared, this as { location?: () => unknown })
      return prepared
    }) as never),
    wrapMethod(statement, 'run', timed('run', nodeSqliteDriver) as never),
    wrapMethod(statement, 'get', timed('get', nodeSqliteDriver) as never),
    wrapMethod(statement, 'all', timed('all', nodeSqliteDriver) as never),
    wrapMethod(statement, 'iterate', ((original: Method) => iterated(original, nodeSqliteDriver)) as never),
    wrapMethod(database, 'exec', ((original: (this: Database, sql: string) => unknown) => executes(original, 'node:sqlite', (db) => locationOf(db as { location?: () => unknown }))) as never)
  ]
}

const nodeSqliteShare = new ProcessShare(instrumentNodeSqlite, () => {
  for (const restore of (nodeSqliteUndo ?? []).reverse()) restore()
  nodeSqliteUndo = undefined
})

/**
 * `node:sqlite` publishes its statements (`sqlite.db.query`) from Node 26 on; on Node 22 to 25
 * the app's `DatabaseSync` statements (`run`, `get`, `all`, `iterate`, `exec`) are instrumented
 * while a profiler is alive, once the app has loaded node:sqlite (looked for again at each
 * unit's start: loading it for the app would print Node 22's ExperimentalWarning). Where it
 * publishes, the channel alone records them: never both. Returns the release.
 */
export function observeNodeSqlite (): () => void {
  return nodeSqliteShare.retain()
}

/** Looks for node:sqlite loaded since (an app that imports it lazily): at each unit's start, until it is found. */
export function findNodeSqlite (): void {
  if (nodeSqliteShare.held && nodeSqliteUndo === undefined) instrumentNodeSqlite()
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
