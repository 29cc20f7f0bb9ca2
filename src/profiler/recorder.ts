import { getHeapStatistics } from 'node:v8'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { KernelContext } from '../kernel/context.js'
import type { FinishedUnit, RequestSnapshot } from '../kernel/collector.js'
import { Recording, recordingOf } from './recording.js'
import type { RecordingHolder } from './recording.js'
import type { CapturedLogs } from './log-capture.js'
import { settleLogCalls } from './log-capture.js'
import { SpanList } from './spans.js'
import type { OriginResolver } from './origin.js'
import type { ProfileSaves } from './saves.js'
import type { ProfilerLogger } from './saves.js'

let heapReadAt = -Infinity
let heapRead = 0

/**
 * The heap in use, read at most once a millisecond: V8 fills a whole statistics object for
 * each read, and under load the start and end of thousands of units fall in the same
 * millisecond (the figure is the heap of the process, not of one unit, either way).
 */
export function heapUsed (): number {
  const now = performance.now()
  if (now - heapReadAt >= 1) {
    heapRead = getHeapStatistics().used_heap_size
    heapReadAt = now
  }
  return heapRead
}

/** How long the recording extensions' `end` may take before the recording is kept without them. */
const END_TIMEOUT_MS = 10_000

/** The unit a recording begins for: what it is, and for an HTTP request its live request and reply. */
export interface LiveUnit {
  kind: string
  /** what `record()` was given; none for an HTTP request */
  name?: string
  /** the token of the profile it belongs to, when it is not the unit its context began in; null: none */
  parent?: string | null
  request?: FastifyRequest
  reply?: FastifyReply
  /** begun at its exception, left out before (kept past the save budget: see Recording.fromException) */
  fromException?: boolean
}

/** A unit as it ends: what the collectors reading live objects get, and an HTTP request's snapshot. */
export interface EndedUnit extends Omit<FinishedUnit, 'redactor'> {
  snapshot?: RequestSnapshot
}

/**
 * Something that lives as long as a recording: begun with it (in the unit's own async context)
 * and ended with it, before its profile is kept. The stopwatch, the render observer, a CPU
 * profile, the capture of mail and queued jobs attach here; what they keep goes in the unit's
 * context (a `KernelState` slot) or on the recording.
 */
export interface RecordingExtension extends RecordingHolder {
  /** named in the warning when it fails */
  readonly name: string
  begin?(recording: Recording, context: KernelContext, unit: LiveUnit): void
  /** may finish asynchronously (a CPU profile being stopped): the recording is kept after */
  end?(recording: Recording, context: KernelContext): void | Promise<void>
}

/**
 * Begins and ends recordings, whatever the unit of work: reserves its token, attaches what lives
 * as long as it, and hands what ended to the saves. An HTTP request's recording is begun and
 * ended by the stage listeners (`request-recording.ts`); any other unit's by `record()`.
 */
export class Recorder {
  private readonly extensions: RecordingExtension[] = []
  /** the extensions that keep values with a recording (counted and cut with it) */
  private holders: readonly RecordingHolder[] = []

  /**
   * @param origins where spans were started in the app's code is captured and resolved with it (the `origins` option)
   * @param collectLive what the collectors reading live objects collect of a unit as it ends (the kernel's)
   */
  constructor (
    private readonly saves: ProfileSaves,
    private readonly maxSpans: number,
    private readonly origins: OriginResolver | undefined,
    private readonly collectLive: (ended: EndedUnit, recording: Recording) => Record<string, unknown> | undefined,
    private readonly log: ProfilerLogger
  ) {}

  /** Adds what begins and ends with every recording from now on. */
  extend (extension: RecordingExtension): void {
    this.extensions.push(extension)
    if (extension.held !== undefined || extension.shrink !== undefined) this.holders = [...this.holders, extension]
  }

  /**
   * Begins recording the unit whose context this is; undefined when it is not profiled (the save
   * budget is spent, or no token can be promised now).
   */
  begin (context: KernelContext, unit: LiveUnit, logs: CapturedLogs | undefined): Recording | undefined {
    const token = this.saves.reserve(unit.fromException === true)
    if (token === undefined) return undefined
    const parent = unit.parent === null ? undefined : unit.parent ?? recordingOf(context.parent)?.token
    const recording = new Recording(token, unit.kind, unit.name, parent, context, logs, heapUsed(), new SpanList(this.maxSpans, context.startedAt, this.origins))
    if (unit.fromException === true) recording.fromException = true
    context.set('profiler', recording)
    recording.holders = this.holders
    for (const extension of this.extensions) {
      if (extension.begin === undefined) continue
      try {
        extension.begin(recording, context, unit)
      } catch (error) {
        this.log.warn({ err: error, extension: extension.name }, 'fastify-kernel: a recording extension failed to begin')
      }
    }
    return recording
  }

  /**
   * Ends the recording: what ran on is shown as running; what only the live unit can tell is
   * taken now (its snapshot, the live collectors' data); the rest waits until its profile is read.
   */
  end (recording: Recording, ended: EndedUnit): void {
    const { context } = ended
    recording.totalMs = context.elapsed()
    recording.aborted = ended.aborted
    recording.spans.closed = true
    recording.spans.settle()
    recording.heapUsedEnd = heapUsed()
    recording.request = ended.snapshot
    recording.live = this.collectLive(ended, recording)
    settleLogCalls(recording.logs)
    // a formatted stack holds no frame (its functions and receivers: a request, a reply) any more
    const error = context.exception
    if (error instanceof Error) recording.stack = error.stack
    let pending: Array<Promise<void>> | undefined
    for (const extension of this.extensions) {
      if (extension.end === undefined) continue
      try {
        const done = extension.end(recording, context)
        if (done !== undefined) (pending ??= []).push(done.catch((error: unknown) => { this.failedToEnd(extension, error) }))
      } catch (error) {
        this.failedToEnd(extension, error)
      }
    }
    if (pending === undefined) {
      this.saves.ended(recording)
      return
    }
    const completed = this.saves.ending()
    // an extension that never settles must not keep the recording from being kept (nor its token reserved)
    let timer: ReturnType<typeof setTimeout> | undefined
    const cap = new Promise<void>((resolve) => { timer = setTimeout(resolve, END_TIMEOUT_MS) })
    timer?.unref()
    Promise.race([Promise.all(pending), cap]).then(() => {
      clearTimeout(timer)
      completed()
      this.saves.ended(recording)
    }, () => undefined)
  }

  /**
   * Ends a recording its capture mode does not keep (a unit neither slow nor failed): what
   * attached to it ends as for any other (a CPU profile is stopped), nothing is kept, and its
   * unit's context forgets it (no token header, no toolbar, nothing attributed to it any more).
   */
  discard (recording: Recording): void {
    recording.spans.closed = true
    recording.context.delete('profiler')
    for (const extension of this.extensions) {
      if (extension.end === undefined) continue
      try {
        const done = extension.end(recording, recording.context)
        if (done !== undefined) done.catch((error: unknown) => { this.failedToEnd(extension, error) })
      } catch (error) {
        this.failedToEnd(extension, error)
      }
    }
    this.saves.discarded(recording)
  }

  private failedToEnd (extension: RecordingExtension, error: unknown): void {
    this.log.warn({ err: error, extension: extension.name }, 'fastify-kernel: a recording extension failed to end')
  }
}
