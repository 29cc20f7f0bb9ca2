import type { Collector } from '../../../kernel/collector.js'
import type { TraceEntry } from '../../../kernel/trace.js'
import { recordingOf } from '../../recording.js'
import { roundMs } from '../../panel-kit/calls.js'
import { buildTimeline } from './timeline.js'
import type { Timeline, TimelineRow } from './timeline.js'

/** Total time, time to first byte, the controller's time, heap used, and the unit's timeline. */
export interface TimeData {
  totalMs: number
  /** until the response was handed to Node (end of kernel.response) */
  timeToFirstByteMs: number | null
  /** from the end of kernel.controller_arguments to the next stage; null when no controller ran */
  controllerMs: number | null
  heapUsedStart: number
  heapUsedEnd: number
  /** stages, listeners, the controller and every span of the unit (absent in profiles of older versions) */
  timeline?: Timeline
}

declare module '../../../kernel/collector.js' {
  interface CollectedData {
    time: TimeData
  }
}

/**
 * The controller's time: from the end of kernel.controller_arguments to the start of the stage
 * that followed it (kernel.response, or kernel.exception when it threw). Null when no
 * controller ran (a routing error) or the stages were not traced.
 */
export function controllerTime (entries: readonly TraceEntry[]): { start: number, duration: number } | null {
  let argumentsEnd: number | undefined
  for (const entry of entries) {
    if (entry.listener !== undefined) continue
    if (argumentsEnd !== undefined) return { start: argumentsEnd, duration: Math.max(0, entry.start - argumentsEnd) }
    if (entry.stage === 'kernel.controller_arguments') argumentsEnd = entry.start + entry.duration
  }
  return null
}

const MIB = 1024 * 1024

function fixed (ms: number | null | undefined, digits = 1): string | null {
  return typeof ms === 'number' && Number.isFinite(ms) ? ms.toFixed(digits) : null
}

/** What the legend calls each kind of row. */
const KIND_LABELS: Record<string, string> = {
  stage: 'Stages',
  listener: 'Listeners',
  controller: 'Controller',
  http_client: 'HTTP client',
  db: 'Database',
  cache: 'Cache',
  template: 'Templates',
  app: 'Stopwatch',
  measure: 'performance.measure()',
  otel: 'OpenTelemetry'
}

/** A kind as a CSS class name: any other kind an app or a library records is shown, uncoloured. */
function kindClass (kind: string): string {
  return Object.hasOwn(KIND_LABELS, kind) ? kind : 'other'
}

const row = { type: 'object', required: ['kind', 'name', 'start'], properties: { kind: { type: 'string' }, name: { type: 'string' }, start: { type: 'number' }, duration: { type: ['number', 'null'] } } }

/** The app's stopwatch events, by category: each event's periods and total time. */
function stopwatchModel (rows: readonly TimelineRow[]): Array<{ category: string, events: Array<{ name: string, periods: number, ms: number, running: boolean }> }> {
  const categories = new Map<string, Map<string, { name: string, periods: number, ms: number, running: boolean }>>()
  for (const r of rows) {
    if (r.kind !== 'app') continue
    const category = r.category ?? 'default'
    let events = categories.get(category)
    if (events === undefined) categories.set(category, events = new Map())
    let event = events.get(r.name)
    if (event === undefined) events.set(r.name, event = { name: r.name, periods: 0, ms: 0, running: false })
    event.periods++
    if (r.duration === null) event.running = true
    else event.ms += r.duration
  }
  return [...categories].map(([category, events]) => ({ category, events: [...events.values()] }))
}

/**
 * The timeline (Symfony's "time" panel, its Stopwatch timeline): total time, time to first
 * byte, the controller, the heap, and a waterfall of every stage, listener and span of the
 * unit — HTTP calls, SQL, Redis, renders, the app's stopwatch periods and its
 * `performance.measure()`s. `performance` (its name before) opens it too. The toolbar's time and
 * memory items; the time item is highlighted above `slowMs`.
 */
export function timeCollector (slowMs: number): Collector<TimeData> {
  return {
    name: 'time',
    kinds: 'all',
    label: 'Timeline',
    order: 30,
    deferred: true,
    aliases: ['performance'],
    template: 'profiler/collectors/time.hbs',
    masked: true,
    schema: {
      type: 'object',
      required: ['totalMs', 'heapUsedStart', 'heapUsedEnd'],
      properties: {
        totalMs: { type: 'number' },
        timeToFirstByteMs: { type: ['number', 'null'] },
        controllerMs: { type: ['number', 'null'] },
        heapUsedStart: { type: 'number' },
        heapUsedEnd: { type: 'number' },
        timeline: { type: 'object', required: ['rows', 'dropped'], properties: { rows: { type: 'array', items: row }, dropped: { type: 'number' } } }
      }
    },
    collect ({ context, redactor }) {
      const recording = recordingOf(context)
      if (recording === undefined) return undefined
      const trace = context.trace
      const controller = controllerTime(trace)
      return {
        totalMs: roundMs(recording.totalMs),
        timeToFirstByteMs: recording.timeToFirstByteMs === null ? null : roundMs(recording.timeToFirstByteMs),
        controllerMs: controller === null ? null : roundMs(controller.duration),
        heapUsedStart: recording.heapUsedStart,
        heapUsedEnd: recording.heapUsedEnd,
        timeline: buildTimeline(trace, controller, recording.spans.spans, recording.spans.dropped, redactor)
      }
    },
    panel (p) {
      const mb = (bytes: number): string => (bytes / MIB).toFixed(1)
      const rows = p.timeline?.rows ?? []
      const end = Math.max(p.totalMs, ...rows.map((r) => r.start + (r.duration ?? 0)), 0.001)
      const percent = (ms: number): number => Math.min(100, Math.max(0, (ms / end) * 100))
      const legend = new Map<string, { kind: string, label: string, count: number, ms: number }>()
      for (const r of rows) {
        const kind = kindClass(r.kind)
        let entry = legend.get(r.kind)
        if (entry === undefined) legend.set(r.kind, entry = { kind, label: KIND_LABELS[r.kind] ?? r.kind, count: 0, ms: 0 })
        entry.count++
        entry.ms += r.duration ?? 0
      }
      return {
        totalMs: p.totalMs,
        ttfb: p.timeToFirstByteMs ?? null,
        controllerMs: p.controllerMs ?? null,
        heapStart: mb(p.heapUsedStart),
        heapEnd: mb(p.heapUsedEnd),
        heapDelta: `${p.heapUsedEnd >= p.heapUsedStart ? '+' : ''}${mb(p.heapUsedEnd - p.heapUsedStart)}`,
        hasTimeline: p.timeline !== undefined,
        empty: rows.length === 0,
        dropped: p.timeline?.dropped ?? 0,
        legend: [...legend.values()],
        ticks: [0, 0.25, 0.5, 0.75, 1].map((f) => ({ left: (f * 100).toFixed(0), label: (f * end).toFixed(2) })),
        rows: rows.map((r) => {
          const left = percent(r.start)
          return {
            ...r,
            kindClass: kindClass(r.kind),
            nested: r.kind !== 'stage',
            running: r.duration === null,
            left: left.toFixed(3),
            // a listener of a few microseconds still shows as a sliver; a running span reaches the end
            width: Math.max(0.4, r.duration === null ? 100 - left : percent(r.duration)).toFixed(3)
          }
        }),
        stopwatch: stopwatchModel(rows)
      }
    },
    badge (p) {
      return { text: `${p.totalMs.toFixed(1)} ms`, kind: p.totalMs > slowMs ? 'warning' : 'info' }
    },
    toolbar (p) {
      if (p === undefined) return undefined
      return {
        totalMs: fixed(p.totalMs),
        controllerMs: fixed(p.controllerMs),
        firstByteMs: fixed(p.timeToFirstByteMs),
        spans: p.timeline?.rows.filter((r) => !['stage', 'listener', 'controller'].includes(r.kind)).length ?? 0,
        slow: p.totalMs > slowMs,
        slowMs,
        heap: { start: (p.heapUsedStart / MIB).toFixed(1), end: (p.heapUsedEnd / MIB).toFixed(1) }
      }
    }
  }
}
