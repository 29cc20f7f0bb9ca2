import type { KernelContext } from '../kernel/context.js'
import type { CapturedLogs } from './log-capture.js'
import type { RouteTraceLine } from '../routing/trace.js'
import type { SpanList } from './spans.js'

export const PROFILER_PATH = '/_profiler'
export const TOOLBAR_PATH = '/_wdt'

/** What the profiler keeps about a request while it runs; the profile is built after the response. */
export class Recording {
  timeToFirstByteMs: number | null = null
  size: number | null = null
  totalMs = 0
  aborted = false
  heapUsedEnd = 0
  /** each route and why it did not match, for a miss: traced once, for the 404 page and the profile */
  routeTrace: RouteTraceLine[] | undefined

  constructor (readonly token: string, readonly logs: CapturedLogs | undefined, readonly heapUsedStart: number, readonly spans: SpanList) {}
}

declare module '../kernel/context.js' {
  interface KernelState {
    /** the request is being profiled under this token */
    profiler: Recording
  }
}

/** The request's recording, when it is profiled. */
export function recordingOf (context: KernelContext | null | undefined): Recording | undefined {
  return context?.get('profiler')
}

/** `scheme://host[:port]/_profiler/<token>`, from the same host and scheme the client used. */
export function profileLink (context: KernelContext, token: string): string {
  return `${context.origin()}${PROFILER_PATH}/${token}`
}
