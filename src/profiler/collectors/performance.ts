import { getHeapStatistics } from 'node:v8'
import type { PerformanceData } from '../profile.js'
import { roundMs } from './events.js'

export function heapUsed (): number {
  return getHeapStatistics().used_heap_size
}

/** The performance collector: total time, time to first byte, heap used at start and end. */
export function collectPerformance (totalMs: number, timeToFirstByteMs: number | null, heapUsedStart: number, heapUsedEnd: number): PerformanceData {
  return { totalMs: roundMs(totalMs), timeToFirstByteMs: timeToFirstByteMs === null ? null : roundMs(timeToFirstByteMs), heapUsedStart, heapUsedEnd }
}
