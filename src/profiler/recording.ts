import type { KernelContext } from '../kernel/context.js'
import type { RequestSnapshot } from '../kernel/collector.js'
import type { CapturedLogs } from './log-capture.js'
import type { SpanList } from './spans.js'
import type { RedirectOrigin } from './redirect-cookie.js'

export const PROFILER_PATH = '/_profiler'
export const TOOLBAR_PATH = '/_wdt'

/**
 * Something that keeps values the app gave (a mail's body, a job's data) with a recording, in
 * the unit's state, until its profile is read: a memory storage counts them and, when a
 * recording holds more than it lets one, has them cut (recording-size.ts). A panel's recording
 * extension is one (`RecordingExtension`).
 */
export interface RecordingHolder {
  /** hands each value it keeps for the unit to `count` (what two values share is counted once) */
  held?(context: KernelContext, count: (value: unknown) => void): void
  /** cuts its large values in place, each marked where its panel shows it (bounded-value.ts) */
  shrink?(context: KernelContext): void
}

/**
 * What the profiler keeps about a unit of work (an HTTP request, a job, a command…): recorded
 * while it runs, kept as it ended (what it did, references to what it allocated anyway), and
 * built into a profile only when that is read, or written by a storage that leaves the process.
 */
export class Recording {
  /** an HTTP request's snapshot, taken when it ended */
  request: RequestSnapshot | undefined
  /** what the collectors that read live objects (an app's) collected as it ended, unmasked */
  live: Record<string, unknown> | undefined
  timeToFirstByteMs: number | null = null
  size: number | null = null
  totalMs = 0
  /** the client went away before the response was sent (HTTP requests) */
  aborted = false
  /** the unit's function threw (`record()`): its error is the context's exception */
  failed = false
  /** the unit asked to be recorded (kept whatever the capture mode) */
  asked = false
  /**
   * begun at its exception, the capture mode or the save budget having left it out
   * (`keepExceptions`): kept past the save budget; nothing from before the exception is in it
   */
  fromException = false
  /** bytes of what was kept for it beyond its spans and logs (a mail's raw message, a CPU profile): a memory storage counts them */
  retainedBytes = 0
  heapUsedEnd = 0
  /** its exception's stack, read as it ended (formatted: it keeps no frame alive) */
  stack: string | undefined
  /** the redirect the browser followed to this request (Symfony's `sf_redirect`) */
  redirect: RedirectOrigin | undefined
  /** it held too much to be kept whole and was cut (recording-size.ts): what its profile says of it */
  cut: string | undefined
  /** what keeps values of the app's with it in the unit's state (a panel's mails, jobs, dumps): counted and cut with it (recording-size.ts) */
  holders: readonly RecordingHolder[] = []

  /**
   * @param kind `request`, or what `record()` was given
   * @param name what `record()` was given (undefined for HTTP requests)
   * @param parent the token of the profile this unit belongs to
   * @param context the unit's own state (attributes, trace, exception, the features' slots)
   * @param logs its log calls (an HTTP request's are captured from `request.log`, a unit's from the logger's channel)
   */
  constructor (
    readonly token: string,
    readonly kind: string,
    readonly name: string | undefined,
    readonly parent: string | undefined,
    readonly context: KernelContext,
    readonly logs: CapturedLogs | undefined,
    readonly heapUsedStart: number,
    readonly spans: SpanList
  ) {}
}

declare module '../kernel/context.js' {
  interface KernelState {
    /** the unit is being profiled under this token */
    profiler: Recording
  }
}

/** The unit's recording, when it is profiled. */
export function recordingOf (context: KernelContext | null | undefined): Recording | undefined {
  return context?.get('profiler')
}

/** `scheme://host[:port]/_profiler/<token>`, from the same host and scheme the client used. */
export function profileLink (context: KernelContext, token: string): string {
  return `${context.origin()}${PROFILER_PATH}/${token}`
}
