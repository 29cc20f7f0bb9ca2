import type { TraceEntry, TraceSteps } from './trace.js'
import { now, traceEntries } from './trace.js'
import type { RoutingOutcome } from '../routing/matcher.js'
import type { KernelResponse } from '../http/response.js'
import type { RequestUri } from '../routing/request-uri.js'
import { originOf } from '../routing/request-uri.js'
import type { HttpException } from '../errors/exceptions.js'
import { NOOP_STOPWATCH } from './stopwatch.js'
import type { Stopwatch } from './stopwatch.js'

/** Symfony-style request attributes: what routing and the request listeners decided. */
export interface RequestAttributes {
  _route?: string
  _route_params?: Record<string, string>
  _controller?: string
  _locale?: string
  [name: string]: unknown
}

/**
 * The per-request state of the kernel's features and an app's own, by name, each typed where
 * its feature declares it (declaration merging, as Hono's `ContextVariableMap`):
 *
 *     declare module 'fastify-kernel' { interface KernelState { cart: Cart } }
 *
 * then `request.kernel.set('cart', cart)` and `request.kernel.get('cart')` (a `Cart`, or
 * undefined before it is set). Built-in features declare theirs in their own modules: no
 * feature imports another's code to read its state.
 */
export interface KernelState {}

/**
 * Everything the kernel knows about one request. Created in `kernel.request`, read by
 * listeners, the error controller and the profiler; plain data, no Fastify objects.
 */
export class KernelContext {
  readonly startedAt = now()
  readonly startedAtEpoch = Date.now()
  readonly attributes: RequestAttributes = {}
  /** the stages and listeners that ran, as recorded (see `trace`) */
  readonly steps: TraceSteps = []
  /** scheme, host and raw path as Symfony computes them; set by the router listener */
  uri: RequestUri | undefined
  /** set for requests Fastify rejected before routing (bad URL): they are routing misses */
  forcedMiss = false
  /** the outcome of route matching, when Fastify found no route */
  routing: RoutingOutcome | undefined
  /**
   * The 404 / 405 the router raised in kernel.request for a path no route serves. As in Symfony
   * the stage fails there (later request listeners do not run), but the answer is produced by
   * the not-found handler, so that every hook Fastify runs for its own 404 runs for this one.
   */
  routingError: HttpException | undefined
  /**
   * What else kernel.request decided: a listener's response or the exception it raised. It is
   * answered once every onRequest hook has run (other plugins' too), before the body is read.
   */
  deferred: { response: KernelResponse, error?: undefined } | { error: unknown, response?: undefined } | undefined
  /**
   * A trailing-slash redirect the router matched: as in Symfony it is a route match (its
   * controller redirects), so the rest of kernel.request and the controller stages run first
   */
  redirect: KernelResponse | undefined
  /** the error that went through kernel.exception, as thrown */
  exception: unknown
  /**
   * the 4xx/5xx status the app set on the reply before that error (`reply.code(503)`, an onError
   * hook's): as bare Fastify, an error that carries no status of its own answers with it
   */
  replyStatus: number | undefined
  /** kernel.finish_request and kernel.terminate have run: each runs once whatever ended the request */
  terminated = false
  /**
   * the context of the unit of work this one began in (a request injected by a job, a job run
   * inside a request), when a feature tracks async contexts (the profiler: parent and child profiles)
   */
  parent: KernelContext | undefined
  private state: Partial<KernelState> | undefined

  /** A feature's state for this request (typed by its `KernelState` declaration). */
  get<K extends keyof KernelState> (key: K): KernelState[K] | undefined {
    return this.state?.[key]
  }

  set<K extends keyof KernelState> (key: K, value: KernelState[K]): void {
    // made on first use: most production requests never need one
    this.state ??= {}
    this.state[key] = value
  }

  /**
   * The app's own timings of this request, on the profiler's timeline (Symfony's Stopwatch); a
   * no-op that records nothing when the request is not profiled (production)
   */
  get stopwatch (): Stopwatch {
    return this.state?.stopwatch ?? NOOP_STOPWATCH
  }

  delete (key: keyof KernelState): void {
    if (this.state !== undefined) delete this.state[key]
  }

  /**
   * every stage and listener that ran, with start offset and duration (ms), in order: the
   * profiler's timeline. Made from the recorded steps each time it is read
   */
  get trace (): TraceEntry[] {
    return traceEntries(this.steps)
  }

  /** `scheme://host[:port]`, or '' before the router resolved the URI */
  origin (): string {
    return this.uri === undefined ? '' : originOf(this.uri)
  }

  /** `scheme://host[:port]/raw/path`, as in Symfony's routing messages */
  absoluteUrl (): string {
    return this.uri === undefined ? '' : originOf(this.uri) + this.uri.path
  }

  /** the absolute URL with the query string, or `fallback` before the router resolved the URI */
  requestUrl (fallback: string): string {
    const uri = this.uri
    return uri === undefined ? fallback : originOf(uri) + uri.path + (uri.query === '' ? '' : '?' + uri.query)
  }

  elapsed (): number {
    return now() - this.startedAt
  }
}
