import { pathMatcher } from './paths.js'
import type { PathMatcher } from './paths.js'

/**
 * What keeps a profiler left on (shared dev, staging, a load test) from costing or storing what
 * nobody reads: the options beside `capture` (docs/profiler.md, "Leaving the profiler on").
 */
export interface CaptureGuardOptions {
  /**
   * paths never profiled (Symfony 8.2's `excludedPaths`, @fastify/otel's `ignorePaths`): each
   * the whole path, without the query; `*` stands for any characters, `/` included
   * (`'/health'`, `'/assets/*'`). Such a request costs one lookup, gets no token and no toolbar
   */
  excludedPaths?: string[]
  /**
   * response statuses whose profile is not kept (Symfony 8.2's `excludedHttpCodes`): `[304]`.
   * Decided at the response: the request was recorded, its recording is let go
   */
  excludedHttpCodes?: number[]
  /**
   * a request that ends in an exception (a 5xx, a thrown error) gets a profile even when the
   * capture mode or the save budget left it out, as Nightwatch keeps exceptions at their own
   * rate (default true). Its recording begins at the exception: the request, the exception, its
   * logs and times; what it called before (SQL, HTTP…) is not in it
   */
  keepExceptions?: boolean
  /**
   * milliseconds of event loop lag (the mean delay over about half a second, as
   * @fastify/under-pressure measures it) past which capture pauses: no request is profiled until
   * the lag falls under half of it. Counted, and shown on the toolbar and the search page.
   * Default 100; `false` never pauses
   */
  maxEventLoopDelay?: number | false
}

export interface ResolvedCaptureGuards {
  excludedPaths: PathMatcher | undefined
  excludedHttpCodes: ReadonlySet<number>
  keepExceptions: boolean
  /** 0: never pauses */
  maxEventLoopDelayMs: number
}

export const DEFAULT_MAX_EVENT_LOOP_DELAY_MS = 100

/** Their part of the options' JSON schema (the shapes; what a schema cannot say is checked below). */
export const CAPTURE_GUARD_SCHEMA = {
  excludedPaths: { type: 'array', items: { type: 'string', minLength: 1, pattern: '^/' } },
  excludedHttpCodes: { type: 'array', items: { type: 'integer', minimum: 100, maximum: 599 } },
  keepExceptions: { type: 'boolean' },
  // checked by captureGuardProblems(), which says the forms it takes
  maxEventLoopDelay: {}
} as const

/** What the schema cannot say in one line: `maxEventLoopDelay` is a number of milliseconds or false. */
export function captureGuardProblems (o: CaptureGuardOptions): string[] {
  const delay: unknown = o.maxEventLoopDelay
  if (delay === undefined || delay === false || (typeof delay === 'number' && delay > 0 && delay <= 60_000)) return []
  return [`option "profiler.maxEventLoopDelay" must be milliseconds (above 0, up to 60000) or false, got ${JSON.stringify(delay) ?? typeof delay}`]
}

/** The guards' options resolved (the schema above has passed). */
export function resolveCaptureGuards (o: CaptureGuardOptions): ResolvedCaptureGuards {
  return {
    excludedPaths: o.excludedPaths === undefined || o.excludedPaths.length === 0 ? undefined : pathMatcher(o.excludedPaths),
    excludedHttpCodes: new Set(o.excludedHttpCodes ?? []),
    keepExceptions: o.keepExceptions ?? true,
    maxEventLoopDelayMs: o.maxEventLoopDelay === false ? 0 : o.maxEventLoopDelay ?? DEFAULT_MAX_EVENT_LOOP_DELAY_MS
  }
}
