import { getHeapStatistics } from 'node:v8'
import type { PerformanceData } from '../profile.js'
import { roundMs } from './events.js'

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

/** The performance collector: total time, time to first byte, heap used at start and end. */
export function collectPerformance (totalMs: number, timeToFirstByteMs: number | null, heapUsedStart: number, heapUsedEnd: number): PerformanceData {
  return { totalMs: roundMs(totalMs), timeToFirstByteMs: timeToFirstByteMs === null ? null : roundMs(timeToFirstByteMs), heapUsedStart, heapUsedEnd }
}
