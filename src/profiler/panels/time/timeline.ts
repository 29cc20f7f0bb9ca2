import type { TraceEntry } from '../../../kernel/trace.js'
import type { Redactor } from '../../../http/redact.js'
import { truncate } from '../../../http/redact.js'
import type { Span } from '../../spans.js'
import { roundMs } from '../../panel-kit/calls.js'

/** One bar of the timeline: a stage, a listener, the controller, or a span of the unit. */
export interface TimelineRow {
  /** `stage`, `listener`, `controller`, or the span's kind (`http_client`, `db`, `cache`, `template`, `app`, `measure`, `otel`…) */
  kind: string
  name: string
  /** milliseconds from the start of the unit */
  start: number
  /** null: still running when the response was sent */
  duration: number | null
  /** a stopwatch event's category */
  category?: string
  /** a listener's priority */
  priority?: number
  /** a stage or listener that threw, stopped propagation or answered */
  outcome?: string
  /** a span's failure */
  error?: string
  /** the kernel's own call (its session store, login throttling, profile storage): what for */
  kernel?: string
  /** where the app made the call: `file:line` */
  origin?: string
}

export interface Timeline {
  rows: TimelineRow[]
  /** spans over the profiler's `maxSpans`: counted, not kept */
  dropped: number
}

const MAX_NAME = 200
// to the next space: the query (where secrets are) may hold anything a raw name carries
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/\S+/gi

/**
 * A span's name as the timeline shows it: cut, and any URL in it masked (user-info, secret
 * query values) by the one redaction policy. Spans keep raw values while they are recorded
 * (recording must be cheap); what is stored goes through this.
 */
export function spanLabel (name: string, redactor: Redactor): string {
  const masked = name.replace(URL_IN_TEXT, (url) => redactor.url(url))
  return truncate(masked, MAX_NAME)
}

/**
 * The unit's timeline: stages and listeners (the kernel's trace), the controller between
 * kernel.controller_arguments and the next stage, and every span, ordered by start (a stage
 * before its listeners, the kernel's rows before spans starting at the same time).
 */
export function buildTimeline (trace: readonly TraceEntry[], controller: { start: number, duration: number } | null, spans: readonly Span[], dropped: number, redactor: Redactor): Timeline {
  const rows: TimelineRow[] = []
  for (const entry of trace) {
    const row: TimelineRow = entry.listener === undefined
      ? { kind: 'stage', name: entry.stage, start: roundMs(entry.start), duration: roundMs(entry.duration) }
      : { kind: 'listener', name: entry.listener, start: roundMs(entry.start), duration: roundMs(entry.duration), priority: entry.priority }
    if (entry.outcome !== undefined) row.outcome = entry.outcome
    rows.push(row)
  }
  if (controller !== null) rows.push({ kind: 'controller', name: 'controller', start: roundMs(controller.start), duration: roundMs(controller.duration) })
  for (const span of spans) {
    const row: TimelineRow = { kind: span.kind, name: spanLabel(span.name, redactor), start: roundMs(span.start), duration: span.duration === null ? null : roundMs(span.duration) }
    if (typeof span.data.category === 'string') row.category = truncate(span.data.category, MAX_NAME)
    if (span.error !== undefined) row.error = truncate(span.error, 1000)
    if (span.data.kernel === true) row.kernel = typeof span.data.purpose === 'string' ? span.data.purpose : 'kernel'
    if (span.origin !== undefined) row.origin = `${span.origin.file}:${span.origin.line}`
    rows.push(row)
  }
  const rank = (row: TimelineRow): number => row.kind === 'stage' ? 0 : row.kind === 'listener' ? 1 : row.kind === 'controller' ? 2 : 3
  // a stable sort: the trace's own order is kept among rows that start together
  rows.sort((a, b) => a.start - b.start || rank(a) - rank(b))
  return { rows, dropped }
}
