import type { Collector } from '../../../kernel/collector.js'
import type { TraceEntry } from '../../../kernel/trace.js'
import { recordingOf } from '../../recording.js'
import { roundMs } from '../../panel-kit/calls.js'

declare module '../../../kernel/collector.js' {
  interface CollectedData {
    events: EventsData
  }
}

/** Each stage and listener that ran, in order, with start and duration. */
export interface EventsData {
  /** false when the kernel's trace was off: nothing was recorded */
  tracing: boolean
  entries: TraceEntry[]
  /** milliseconds from the start of the request to kernel.terminate: the waterfall's width */
  totalMs: number
}

const MAX_ENTRIES = 1000

/** The stages panel (Symfony's "Events"): a waterfall of every stage and listener, and its table. */
export function eventsCollector (tracing: boolean): Collector<EventsData> {
  return {
    name: 'events',
    label: 'Events',
    order: 60,
    deferred: true,
    template: 'profiler/collectors/events.hbs',
    masked: true,
    schema: {
      type: 'object',
      required: ['tracing', 'entries'],
      properties: {
        tracing: { type: 'boolean' },
        totalMs: { type: 'number' },
        entries: { type: 'array', items: { type: 'object', required: ['stage', 'start', 'duration'], properties: { stage: { type: 'string' }, start: { type: 'number' }, duration: { type: 'number' } } } }
      }
    },
    collect ({ context }) {
      const trace = context.trace
      const entries: TraceEntry[] = []
      for (let i = 0; i < trace.length && i < MAX_ENTRIES; i++) {
        const entry = trace[i]
        entries.push({ ...entry, start: roundMs(entry.start), duration: roundMs(entry.duration) })
      }
      return { tracing, entries, totalMs: roundMs(recordingOf(context)?.totalMs ?? context.elapsed()) }
    },
    panel (data) {
      const entries = data.entries
      const end = Math.max(data.totalMs ?? 0, ...entries.map((e) => e.start + e.duration), 0.001)
      const percent = (ms: number): string => Math.min(100, Math.max(0, (ms / end) * 100)).toFixed(3)
      const stageOrder: string[] = []
      for (const entry of entries) if (entry.listener === undefined && !stageOrder.includes(entry.stage)) stageOrder.push(entry.stage)
      return {
        tracing: data.tracing,
        empty: entries.length === 0,
        totalMs: end,
        stageOrder: stageOrder.join(' › '),
        ticks: [0, 0.25, 0.5, 0.75, 1].map((f) => ({ left: (f * 100).toFixed(0), label: (f * end).toFixed(2) })),
        rows: entries.map((entry) => ({
          stage: entry.stage,
          listener: entry.listener,
          isStage: entry.listener === undefined,
          priority: entry.priority,
          start: entry.start,
          duration: entry.duration,
          outcome: entry.outcome,
          left: percent(entry.start),
          // a listener of a few microseconds still shows as a sliver
          width: Math.max(0.4, Number(percent(entry.duration))).toFixed(3)
        }))
      }
    },
    badge (data) {
      return { text: String(data.entries.filter((e) => e.listener === undefined).length), kind: 'info' }
    }
  }
}
