import { getHeapStatistics } from 'node:v8'
import type { PerformanceData } from '../profile.js'

export function heapUsed (): number {
  return getHeapStatistics().used_heap_size
}

/** The performance collector: total time, time to first byte, heap used at start and end. */
export function collectPerformance (totalMs: number, timeToFirstByteMs: number | null, heapUsedStart: number, heapUsedEnd: number): PerformanceData {
  return { totalMs, timeToFirstByteMs, heapUsedStart, heapUsedEnd }
}
