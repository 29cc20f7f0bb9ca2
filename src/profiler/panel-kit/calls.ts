import type { Badge } from '../../kernel/collector.js'
import type { KernelContext } from '../../kernel/context.js'
import { recordingOf } from '../recording.js'
import type { Span } from '../spans.js'
import type { SpanOrigin } from '../origin.js'

/** Milliseconds to the microsecond: the clock says more, a profile needs no more (and stays small). */
export function roundMs (ms: number): number {
  return Math.round(ms * 1000) / 1000
}

/** What every call of the HTTP Client, Database and Cache panels has: when, how long, how it ended. */
export interface TimedCall {
  /** milliseconds from the start of the unit */
  start: number
  /** null: still running when the response was sent */
  duration: number | null
  error?: string
  /** where in the app's code the call was made */
  origin?: SpanOrigin
}

/** A span's timing, rounded as the other panels round theirs, and where it was made. */
export function timing (span: Span): TimedCall {
  const call: TimedCall = { start: roundMs(span.start), duration: span.duration === null ? null : roundMs(span.duration) }
  if (span.error !== undefined) call.error = span.error
  if (span.origin !== undefined) call.origin = span.origin
  return call
}

/** The unit's spans of one kind (formatted: the profiler formats them before collecting). */
export function spansOfKind (context: KernelContext, kind: string): Span[] {
  return recordingOf(context)?.spans.spans.filter((span) => span.kind === kind) ?? []
}

export interface Totals {
  count: number
  totalMs: number
  errors: number
  running: number
}

export function totals (calls: readonly TimedCall[]): Totals {
  let totalMs = 0
  let errors = 0
  let running = 0
  for (const call of calls) {
    if (call.duration === null) running++
    else totalMs += call.duration
    if (call.error !== undefined) errors++
  }
  return { count: calls.length, totalMs: roundMs(totalMs), errors, running }
}

/**
 * A toolbar item's model: the count and the total time, highlighted as an error when a call
 * failed, as a warning above the user's threshold (milliseconds of the panel's total time).
 * No item for a unit that made no such call.
 */
export function ioToolbar (sums: Totals, thresholdMs: number, extra: object = {}): object | undefined {
  if (sums.count === 0) return undefined
  return {
    ...sums,
    totalMs: sums.totalMs.toFixed(1),
    thresholdMs,
    highlight: sums.errors > 0 ? 'error' : sums.totalMs > thresholdMs ? 'warning' : null,
    ...extra
  }
}

/** The panel's figures and each call's row class: failed, slow (above `slowMs`), still running. */
export function rowClass (call: TimedCall, slowMs = Infinity): string {
  if (call.error !== undefined) return 'row-error'
  if (call.duration === null) return 'row-running'
  return call.duration >= slowMs ? 'row-warning' : ''
}

/** A panel's badge counting what the unit did: the failures in red when any, else how many (those dropped past the bound included). */
export function countBadge (items: ReadonlyArray<{ error?: unknown }>, dropped: number): Badge | undefined {
  const failed = items.filter((item) => item.error !== undefined).length
  if (failed > 0) return { text: String(failed), kind: 'error' }
  const count = items.length + dropped
  return count > 0 ? { text: String(count), kind: 'info' } : undefined
}
