import { getHeapStatistics } from 'node:v8'
import type { Collector } from '../../kernel/collector.js'
import type { TraceEntry } from '../../kernel/trace.js'
import { PROFILER_PATH, recordingOf } from '../recording.js'
import { roundMs } from './events.js'

/** Total time, time to first byte, the controller's time, heap used at start and end. */
export interface PerformanceData {
  totalMs: number
  /** until the response was handed to Node (end of kernel.response) */
  timeToFirstByteMs: number | null
  /** from the end of kernel.controller_arguments to the next stage; null when no controller ran */
  controllerMs: number | null
  heapUsedStart: number
  heapUsedEnd: number
}

declare module '../../kernel/collector.js' {
  interface CollectedData {
    performance: PerformanceData
  }
}

let heapReadAt = -Infinity
let heapRead = 0

/**
 * The heap in use, read at most once a millisecond: V8 fills a whole statistics object for
 * each read, and under load the start and end of thousands of requests fall in the same
 * millisecond (the figure is the heap of the process, not of one request, either way).
 */
export function heapUsed (): number {
  const now = performance.now()
  if (now - heapReadAt >= 1) {
    heapRead = getHeapStatistics().used_heap_size
    heapReadAt = now
  }
  return heapRead
}

/**
 * The controller's time: from the end of kernel.controller_arguments to the start of the stage
 * that followed it (kernel.response, or kernel.exception when it threw). Null when no
 * controller ran (a routing error) or the stages were not traced.
 */
export function controllerTime (entries: readonly TraceEntry[]): number | null {
  let argumentsEnd: number | undefined
  for (const entry of entries) {
    if (entry.listener !== undefined) continue
    if (argumentsEnd !== undefined) return Math.max(0, entry.start - argumentsEnd)
    if (entry.stage === 'kernel.controller_arguments') argumentsEnd = entry.start + entry.duration
  }
  return null
}

const MIB = 1024 * 1024

function fixed (ms: number | null | undefined, digits = 1): string | null {
  return typeof ms === 'number' && Number.isFinite(ms) ? ms.toFixed(digits) : null
}

/** The performance panel (Symfony's "time"), and the toolbar's time and memory items. */
export const performanceCollector: Collector<PerformanceData> = {
  name: 'performance',
  label: 'Performance',
  order: 30,
  aliases: ['time'],
  template: 'profiler/collectors/performance.hbs',
  masked: true,
  schema: {
    type: 'object',
    required: ['totalMs', 'heapUsedStart', 'heapUsedEnd'],
    properties: { totalMs: { type: 'number' }, timeToFirstByteMs: { type: ['number', 'null'] }, controllerMs: { type: ['number', 'null'] }, heapUsedStart: { type: 'number' }, heapUsedEnd: { type: 'number' } }
  },
  collect ({ context }) {
    const recording = recordingOf(context)
    if (recording === undefined) return undefined
    const controllerMs = controllerTime(context.trace)
    return {
      totalMs: roundMs(recording.totalMs),
      timeToFirstByteMs: recording.timeToFirstByteMs === null ? null : roundMs(recording.timeToFirstByteMs),
      controllerMs: controllerMs === null ? null : roundMs(controllerMs),
      heapUsedStart: recording.heapUsedStart,
      heapUsedEnd: recording.heapUsedEnd
    }
  },
  panel (p) {
    const mb = (bytes: number): string => (bytes / 1048576).toFixed(1)
    const ttfb = p.timeToFirstByteMs ?? null
    const controllerMs = p.controllerMs ?? null
    const total = Math.max(p.totalMs, 0.001)
    return {
      totalMs: p.totalMs,
      ttfb,
      controllerMs,
      bars: [
        { label: 'Time to first byte', ms: ttfb ?? 0, width: (((ttfb ?? 0) / total) * 100).toFixed(1) },
        ...(controllerMs !== null ? [{ label: 'Controller', ms: controllerMs, width: ((controllerMs / total) * 100).toFixed(1) }] : []),
        { label: 'Total', ms: p.totalMs, width: '100.0' }
      ],
      heapStart: mb(p.heapUsedStart),
      heapEnd: mb(p.heapUsedEnd),
      heapDelta: `${p.heapUsedEnd >= p.heapUsedStart ? '+' : ''}${mb(p.heapUsedEnd - p.heapUsedStart)}`
    }
  },
  badge (p) {
    return { text: `${p.totalMs.toFixed(1)} ms`, kind: 'info' }
  },
  toolbar (p, profile) {
    if (p === undefined) return undefined
    return {
      totalMs: fixed(p.totalMs),
      controllerMs: fixed(p.controllerMs),
      firstByteMs: fixed(p.timeToFirstByteMs),
      heap: { start: (p.heapUsedStart / MIB).toFixed(1), end: (p.heapUsedEnd / MIB).toFixed(1) },
      link: `${PROFILER_PATH}/${profile.token}?panel=performance`
    }
  }
}
