import { currentKernelContext } from '../kernel/async-context.js'
import type { KernelContext } from '../kernel/context.js'
import type { Redactor } from '../http/redact.js'
import { CapturedStack, OriginCapture } from './origin.js'
import type { OriginResolver, SpanOrigin } from './origin.js'

/**
 * One thing the unit did that took time: an outgoing HTTP call, a SQL statement, a Redis
 * command, a template render, an app's own stopwatch period or `performance.measure()`, an
 * OpenTelemetry span. Plain data: each panel reads the spans of its kind.
 */
export interface Span {
  /** which panel shows it: `http_client`, `db`, `cache`, `template`, `app`, … */
  kind: string
  /** what it was, in a few words (`GET https://api.example/orders`, `SELECT …`, `GET cart:7`) */
  name: string
  /** milliseconds from the start of the unit */
  start: number
  /** milliseconds; null: still running when the profile was made (the response was sent first) */
  duration: number | null
  /** the failure's message, when it failed */
  error?: string
  /** what its panel shows of it: plain JSON, secrets masked, long values cut */
  data: Record<string, unknown>
  /** where in the app's code it was started (profiles made with `origins` on, when the stack had an app frame) */
  origin?: SpanOrigin
}

/** A span being recorded: ended (or failed) by whoever started it. */
export interface OpenSpan {
  /** the span's data, completed at its end (a status, a row count) */
  end (data?: Record<string, unknown>): void
  fail (error: unknown, data?: Record<string, unknown>): void
}

const NOOP: OpenSpan = { end () {}, fail () {} }

/**
 * Turns what a channel handler kept of a span, raw (recording must be cheap), into what panels
 * show and profiles store: its `name` and `data` masked with the redaction policy and cut. Run
 * once per span, before any collector reads the spans.
 */
export type SpanFormatter = (span: Span, redactor: Redactor) => void

const formatters = new Map<string, SpanFormatter>()

/**
 * What a span's raw data keeps once its unit ended, until its profile is read: plain values and
 * references to what the call's caller gave (a statement, its values), never a library's live
 * objects (a client request, a result set, a connection). Cheap: no masking, no analysis.
 */
export type SpanSettler = (span: Span) => void

const settlers = new Map<string, SpanSettler>()

/** Sets what keeps the spans of `kind` once their unit ended (see SpanSettler). */
export function settleSpansWith (kind: string, settler: SpanSettler): void {
  settlers.set(kind, settler)
}

/** Sets the formatter of the spans of `kind` (the same function whichever app registers it). */
export function formatSpansWith (kind: string, formatter: SpanFormatter): void {
  formatters.set(kind, formatter)
}

/**
 * The spans of one unit, bounded: beyond `max`, spans are counted, not kept (`+N more`).
 * Closed when the response is sent (kernel.terminate): what runs on is shown as running.
 */
export class SpanList {
  readonly spans: Span[] = []
  /** spans not kept: over the bound */
  dropped = 0
  /** the response was sent: spans still running stay so, later ones are not recorded */
  closed = false

  /** the spans' raw data has been made into what panels show (see SpanFormatter) */
  private formatted = false
  /** the stack captured where each span started (same index as `spans`), resolved when formatting */
  private stacks: Array<CapturedStack | undefined> = []

  /**
   * @param origin the unit's start (performance.now()), spans' times are offsets from it
   * @param origins where each span started is captured (the profiler's `origins` option) and resolved with it
   */
  constructor (private readonly max: number, private readonly origin: number, private readonly origins?: OriginResolver) {}

  /** whether spans started here capture where they were started (the `origins` option) */
  get capturesOrigins (): boolean {
    return this.origins !== undefined
  }

  /**
   * The unit ended: each span keeps only plain values (its kind's settler) and where it started
   * is resolved now, so that nothing the spans hold keeps a library's objects (nor the frames'
   * receivers a captured stack holds) alive until the profile is read.
   */
  settle (): void {
    this.visit((span) => { settlers.get(span.kind)?.(span) })
  }

  /** Formats every span kept (once): called when the profile is built, before the collectors read it. */
  format (redactor: Redactor): void {
    if (this.formatted) return
    this.formatted = true
    this.visit((span) => {
      formatters.get(span.kind)?.(span, redactor)
      // a failure's message may quote a URL with its credentials (undici's, a driver's)
      if (span.error !== undefined) span.error = redactor.message(span.error)
    })
  }

  /**
   * Applies `apply` to each span (a span it cannot read is shown by its kind alone, never with
   * raw data), and resolves each span's origin from its captured stack, once: the stacks are
   * let go then.
   */
  private visit (apply: (span: Span) => void): void {
    const stacks = this.stacks
    this.stacks = []
    for (let i = 0; i < this.spans.length; i++) {
      const span = this.spans[i]!
      try {
        apply(span)
      } catch {
        span.name = span.kind
        span.data = {}
      }
      const stack = stacks[i]
      if (stack === undefined || this.origins === undefined) continue
      try {
        const origin = this.origins.resolve(stack)
        if (origin !== undefined) span.origin = origin
      } catch {
        // a stack that cannot be read: the span shows no origin
      }
    }
  }

  /**
   * Starts a span. `origin`: where to capture where it started (default: below this call), a
   * stack captured already, or null for none (the kernel's own calls); `fallback`: a stack
   * captured earlier for the same call, for when this one has no frame of the app's. Nothing is
   * captured when the profiler's `origins` option is off.
   */
  start (kind: string, name: string, data: Record<string, unknown> = {}, now = performance.now(), origin?: OriginCapture | CapturedStack | null, fallback?: CapturedStack): OpenSpan {
    if (this.closed) return NOOP
    if (this.spans.length >= this.max) {
      this.dropped++
      return NOOP
    }
    const span: Span = { kind, name, start: now - this.origin, duration: null, data }
    if (this.origins !== undefined && origin !== null) this.stacks[this.spans.length] = capture(origin, fallback)
    this.spans.push(span)
    return {
      end: (more) => {
        // ended after the response was sent: it was still running then, and is shown so
        if (span.duration !== null || this.closed) return
        span.duration = performance.now() - this.origin - span.start
        if (more !== undefined) Object.assign(span.data, more)
      },
      fail: (error, more) => {
        if (span.duration !== null || this.closed) return
        span.duration = performance.now() - this.origin - span.start
        span.error = error instanceof Error ? error.message : String(error)
        if (more !== undefined) Object.assign(span.data, more)
      }
    }
  }

  /**
   * Adds a span that already ended (a `performance.measure()`, an OpenTelemetry span); `origin`
   * as for `start` (default: none, a span added when it ends says nothing of where it began).
   */
  add (span: Omit<Span, 'start'> & { start: number }, origin: OriginCapture | CapturedStack | null = null): void {
    if (this.closed) return
    if (this.spans.length >= this.max) {
      this.dropped++
      return
    }
    if (this.origins !== undefined && origin !== null) this.stacks[this.spans.length] = capture(origin)
    this.spans.push({ ...span, start: span.start - this.origin })
  }
}

/** Spans started with no capture site of their own: the frames below `SpanList.start`'s caller. */
const startedHere = new OriginCapture(SpanList.prototype.start)

function capture (origin: OriginCapture | CapturedStack | undefined, fallback?: CapturedStack): CapturedStack {
  const stack = origin instanceof CapturedStack ? origin : CapturedStack.at(origin ?? startedHere)
  if (fallback !== undefined) stack.fallback = fallback
  return stack
}

/**
 * The span list of the unit the calling code runs for, if that unit is profiled: what a
 * diagnostics channel subscriber calls to attribute a library's call to its unit. Calls made
 * outside any unit (at start-up, in an app's own timers) or after the unit's profile was
 * made find none.
 */
export function currentSpans (): SpanList | undefined {
  return spansOf(currentKernelContext())
}

export function spansOf (context: KernelContext | undefined): SpanList | undefined {
  // the profiler's recording, by its state slot (recording.ts)
  const spans = context?.get('profiler')?.spans
  return spans === undefined || spans.closed ? undefined : spans
}

/** Starts a span in the current unit, if it is profiled (a no-op otherwise). */
export function startSpan (kind: string, name: string, data?: Record<string, unknown>): OpenSpan {
  return currentSpans()?.start(kind, name, data) ?? NOOP
}
