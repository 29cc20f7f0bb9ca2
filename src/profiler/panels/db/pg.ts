import { currentKernelContext, kernelTrafficOf, runInUnit } from '../../../kernel/async-context.js'
import type { KernelContext } from '../../../kernel/context.js'
import type { OpenSpan } from '../../spans.js'
import { spansOf } from '../../spans.js'
import { CapturedStack, OriginCapture } from '../../origin.js'
import type { ChannelSubscription } from '../../instrument/channels.js'
import type { ModuleInstrumentation } from '../../instrument/modules.js'
import type { InstrumentedCopy } from '../../instrument/notices.js'
import { wrapMethod } from '../../instrument/patch.js'
import { DB, SqlCall, startSql } from './capture.js'
import type { SqlTraceContext } from './capture.js'
import type { ExplainVia } from './explain.js'
import type { TracedContext } from '../../instrument/traced-call.js'
import { tracedCalls } from '../../instrument/traced-call.js'

/**
 * pg (node-postgres) 8 publishes nothing: while a profiler is alive, the app's own copy of it
 * is instrumented — `Client#query` (every statement: `Pool#query` goes through it, and so do a
 * checked-out client, prepared statements, Query objects and cursors), and pg-pool's
 * `Pool#connect` (a waiting caller's callback is run from the `release()` of another unit,
 * and is bound back to its own; `Pool#query`'s statement, run in that callback on a later tick,
 * takes the line of the app that called `query` as its origin). A pg that publishes the `pg:query` tracing channel (proposed in
 * brianc/node-postgres#3650) is recognised at its first statement and left alone: the channel
 * is used instead.
 */

interface PgClient {
  database?: string
  query: (...args: unknown[]) => unknown
}

interface PgStatement {
  text: string
  values?: unknown
  name?: string
}

/** A query config, a Query object or a cursor (pg-cursor, pg-query-stream's `cursor`). */
interface QueryLike {
  text?: unknown
  values?: unknown
  name?: unknown
  cursor?: { text?: unknown, values?: unknown }
  submit?: unknown
  handleReadyForQuery?: (...args: unknown[]) => unknown
  handleError?: (...args: unknown[]) => unknown
  _result?: unknown
}

/** The pooled clients' pools, noted at checkout: a statement is explained through its pool. */
const poolOf = new WeakMap<object, object>()

/** Set while an instrumented call runs: a `pg:query` published inside it means this pg publishes. */
let probing: { native: boolean } | undefined

function statementOf (config: unknown, values: unknown): PgStatement | undefined {
  if (typeof config === 'string') return { text: config, values: Array.isArray(values) ? values : undefined }
  if (typeof config !== 'object' || config === null) return undefined
  const query = config as QueryLike
  const source = typeof query.text === 'string' ? query : query.cursor
  if (source === undefined || typeof source.text !== 'string') return undefined
  const statement: PgStatement = { text: source.text, values: Array.isArray(values) ? values : source.values }
  if (typeof query.name === 'string' && query.name !== '') statement.name = query.name
  return statement
}

/** Ends the span once: the result (pg's Result: `rowCount`, `rows`) or the failure. */
function finisher (span: OpenSpan, context: TracedContext): (error: unknown, result?: unknown) => void {
  let done = false
  return (error, result) => {
    if (done) return
    done = true
    if (error !== undefined && error !== null) {
      context.error = error
      span.fail(error)
    } else {
      context.result = result
      span.end()
    }
  }
}

/** A callback run in the unit that made the call (pg runs it from the connection's socket, whoever's it was). */
function callbackIn (unit: KernelContext, callback: (...args: unknown[]) => unknown, finish: (error: unknown, result?: unknown) => void): (...args: unknown[]) => unknown {
  return function (this: unknown, ...args: unknown[]) {
    finish(args[0], args[1])
    return runInUnit(unit, () => callback.apply(this, args))
  }
}

/** A Query object or cursor: its end is told to it by the client (`handleReadyForQuery`, `handleError`). */
function watchSubmittable (query: QueryLike, finish: (error: unknown, result?: unknown) => void): void {
  const ready = query.handleReadyForQuery
  const failed = query.handleError
  if (typeof ready !== 'function' || typeof failed !== 'function') return
  query.handleError = function (this: QueryLike, ...args: unknown[]) {
    finish(args[0] ?? 'the query failed')
    return failed.apply(this, args)
  }
  query.handleReadyForQuery = function (this: QueryLike, ...args: unknown[]) {
    finish(undefined, this._result)
    return ready.apply(this, args)
  }
}

function instrumentClientQuery (unpatch: () => void): (original: PgClient['query']) => PgClient['query'] {
  return (original) => function query (this: PgClient, ...args: unknown[]) {
    const unit = currentKernelContext()
    const statement = unit === undefined ? undefined : statementOf(args[0], args[1])
    if (statement === undefined) return original.apply(this, args)
    const via: ExplainVia = poolOf.has(this) ? { kind: 'pg-pool', handle: poolOf.get(this)! } : { kind: 'pg-client', handle: this }
    const context: SqlTraceContext & TracedContext = { query: statement.text, values: statement.values }
    if (typeof this.database === 'string') context.database = this.database
    if (statement.name !== undefined) context.prepared = statement.name
    const span = startSql(context, 'postgresql', 'pg', via, connectCaller)
    if (span === undefined) return original.apply(this, args)
    const finish = finisher(span, context)
    const config = args[0] as QueryLike
    let promised = false
    if (typeof config === 'object' && typeof config.submit === 'function') {
      watchSubmittable(config, finish)
    } else if (typeof args[1] === 'function') {
      args[1] = callbackIn(unit!, args[1] as (...a: unknown[]) => unknown, finish)
    } else if (typeof args[2] === 'function') {
      args[2] = callbackIn(unit!, args[2] as (...a: unknown[]) => unknown, finish)
    } else {
      promised = true
    }
    const probe = { native: false }
    const outer = probing
    probing = probe
    let result: unknown
    try {
      result = original.apply(this, args)
    } catch (error) {
      finish(error)
      throw error
    } finally {
      probing = outer
    }
    // this pg publishes pg:query itself: the channel records its statements from now on
    if (probe.native) unpatch()
    if (promised && isThenable(result)) result.then((value) => { finish(undefined, value) }, (error: unknown) => { finish(error) })
    return result
  }
}

/** The stack of the `Pool#connect` whose callback runs now (the caller of `Pool#query`): its statements' fallback origin. */
let connectCaller: CapturedStack | undefined

function instrumentPoolConnect (original: (...args: unknown[]) => unknown): (...args: unknown[]) => unknown {
  // where `Pool#connect` was called from: the frames below this wrapper
  const callers = new OriginCapture(connect)
  return connect
  function connect (this: object, ...args: unknown[]): unknown {
    const unit = currentKernelContext()
    if (unit === undefined) return original.apply(this, args)
    const pool = this
    const callback = args[0]
    if (typeof callback === 'function') {
      // `Pool#query` connects with a callback that runs the statement on a later tick (an idle
      // client is handed over on the next tick, a new one once connected): where the app called
      // it is only on this stack
      const caller = poolQueryCaller ?? (spansOf(unit)?.capturesOrigins === true ? CapturedStack.at(callers) : undefined)
      // pg-pool runs a waiting caller's callback from another unit's release()
      args[0] = function (this: unknown, ...results: unknown[]) {
        if (typeof results[1] === 'object' && results[1] !== null) poolOf.set(results[1], pool)
        const outer = connectCaller
        connectCaller = caller
        try {
          return runInUnit(unit, () => (callback as (...a: unknown[]) => unknown).apply(this, results))
        } finally {
          connectCaller = outer
        }
      }
      return original.apply(this, args)
    }
    const result = original.apply(this, args)
    if (isThenable(result)) {
      result.then((client) => { if (typeof client === 'object' && client !== null) poolOf.set(client, pool) }, () => {})
    }
    return result
  }
}

/** The stack of the `Pool#query` being called: the `Pool#connect` it makes takes it as its caller. */
let poolQueryCaller: CapturedStack | undefined

/**
 * Where a `Pool#query` promise settles, in its caller's async chain: an ORM that calls the pool
 * from a thenable's `then()` (Drizzle, Prisma's adapter) has no frame of the app's on the stack
 * of its call, but V8 names the app's awaiting function among the async frames of this
 * continuation (`at async route (routes/books.ts:12)`). Taken as the last fallback of the call's stack.
 */
async function settled (result: PromiseLike<unknown>, caller: CapturedStack): Promise<unknown> {
  try {
    return await result
  } finally {
    caller.fallback = CapturedStack.at(settledSite)
  }
}

const settledSite = new OriginCapture(settled)

function instrumentPoolQuery (original: (...args: unknown[]) => unknown): (...args: unknown[]) => unknown {
  const callers = new OriginCapture(query)
  return query
  function query (this: object, ...args: unknown[]): unknown {
    const unit = currentKernelContext()
    if (unit === undefined || spansOf(unit)?.capturesOrigins !== true || kernelTrafficOf(unit) !== undefined) return original.apply(this, args)
    const caller = CapturedStack.at(callers)
    const outer = poolQueryCaller
    poolQueryCaller = caller
    let result: unknown
    try {
      result = original.apply(this, args)
    } finally {
      poolQueryCaller = outer
    }
    // a callback: the caller's stack is where the app called (no thenable in between)
    return args.some((arg) => typeof arg === 'function') || !isThenable(result) ? result : settled(result, caller)
  }
}

function isThenable (value: unknown): value is Promise<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as Promise<unknown>).then === 'function'
}

/** The object of `prototype`'s chain that defines `name` itself. */
function owner (prototype: object | null, name: string): object | undefined {
  for (let at = prototype; at !== null && at !== Object.prototype; at = Object.getPrototypeOf(at) as object | null) {
    if (Object.prototype.hasOwnProperty.call(at, name)) return at
  }
  return undefined
}

/** The methods patched, by the object that defines them */
const patched = new WeakMap<object, Set<string>>()

function patch (target: object | undefined, name: string, wrap: (undo: () => void) => (original: never) => unknown, undo: Array<() => void>): void {
  if (target === undefined || patched.get(target)?.has(name) === true || typeof (target as Record<string, unknown>)[name] !== 'function') return
  const names = patched.get(target) ?? new Set<string>()
  patched.set(target, names.add(name))
  let restore = (): void => {}
  const unpatch = (): void => { restore(); names.delete(name) }
  restore = wrapMethod(target, name, wrap(unpatch) as never)
  undo.push(unpatch)
}

/** Instruments one copy of pg (its exports: `Client`, `Pool`) or of pg-pool (the Pool class). */
function instrumentPg (exports: unknown, copy: InstrumentedCopy): (() => void) | undefined {
  const undo: Array<() => void> = []
  const pg = exports as { Client?: { prototype?: object }, Pool?: { prototype?: object }, prototype?: object }
  // pg-pool alone exports the Pool class itself, and has no Client
  const pool = typeof exports === 'function'
  const clientPrototype = owner(pg.Client?.prototype ?? null, 'query')
  if (!pool && clientPrototype === undefined) copy.lacks(['Client#query'], 'the statements a unit runs')
  patch(clientPrototype, 'query', (unpatch) => instrumentClientQuery(unpatch) as never, undo)
  // pg's BoundPool extends pg-pool's Pool
  const poolClass = pg.Pool ?? (pool ? exports as { prototype?: object } : undefined)
  const connect = owner(poolClass?.prototype ?? null, 'connect')
  if (connect === undefined) copy.lacks(['Pool#connect'], 'the statements run on a connection the pool handed out later')
  patch(connect, 'connect', () => instrumentPoolConnect as never, undo)
  patch(owner(poolClass?.prototype ?? null, 'query'), 'query', () => instrumentPoolQuery as never, undo)
  return undo.length === 0 ? undefined : () => { for (const fn of undo.splice(0)) fn() }
}

/**
 * The pg and pg-pool versions the instrumentation is written for (pg 8 ships pg-pool 3; the suite
 * runs pg 8.23; .ci/matrix.sh runs pg.test.ts against both ends). The floor is 8.0.3, not 8.0.0:
 * pg 8.0.0-8.0.2 never connect on Node 14 and later (`connect()` hangs, brianc/node-postgres#2180,
 * fixed in 8.0.3; measured: pg.test.ts timed out on 8.0.0 under Node 24), and pg 8.0.3 loads
 * pg-pool ^3.1.1, the oldest pg-pool a supported pg runs.
 */
export const PG_VERSIONS = '>=8.0.3 <9'
export const PG_POOL_VERSIONS = '>=3.1.1 <4'

export const pgInstrumentation: ModuleInstrumentation = {
  name: 'pg',
  files: ['/pg/lib/index.js'],
  versions: PG_VERSIONS,
  instrument: instrumentPg
}

export const pgPoolInstrumentation: ModuleInstrumentation = {
  name: 'pg-pool',
  files: ['/pg-pool/index.js'],
  versions: PG_POOL_VERSIONS,
  instrument: instrumentPg
}

/** The context of `pg:query` (brianc/node-postgres#3650): the Query and the client. */
interface PgChannelContext {
  query?: QueryLike
  client?: { database?: unknown }
}

/**
 * A pg that publishes `pg:query` itself: its statements from the channel (and pg-pool's
 * `pg:pool:connect` callbacks bound to their unit), as mysql2's. During a call the
 * instrumentation makes (a pg found to publish at its first statement), the instrumentation
 * records it and the channel is left out.
 */
export const pgChannels: readonly ChannelSubscription[] = [
  { restore: 'pg:pool:connect' },
  tracedCalls<PgChannelContext>('pg:query', DB, (context, traffic) => {
    if (probing !== undefined) {
      probing.native = true
      return undefined
    }
    const statement = statementOf(context.query, undefined)
    if (statement === undefined) return undefined
    const sql: SqlTraceContext & TracedContext = { query: statement.text, values: statement.values }
    if (typeof context.client?.database === 'string') sql.database = context.client.database
    if (statement.name !== undefined) sql.prepared = statement.name
    // the channel's context gets the result: read through this one
    Object.defineProperty(sql, 'result', { get: () => (context as TracedContext).result, enumerable: true })
    return new SqlCall(sql, 'postgresql', 'pg', traffic)
  })
]
