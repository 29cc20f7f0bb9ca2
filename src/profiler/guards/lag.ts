import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { IntervalHistogram } from 'node:perf_hooks'

/**
 * Where the event loop's lag is read: the process's (eventLoopLag), or a test's own. Read at
 * each request's start, so it must be cheap: the process's answers a figure a timer updates.
 */
export interface LagSource {
  /** the event loop's lag now, in milliseconds */
  lagMs (): number
  /** stops measuring (the app closes) */
  close (): void
}

/** How long the lag is averaged over (and how often the histogram is read). */
export const LAG_WINDOW_MS = 500
/** The histogram's sampling interval, as @fastify/under-pressure's default. */
const RESOLUTION_MS = 10

/**
 * The profiler's own synchronous work the loop waited on, in milliseconds, in all since the
 * process started (a CPU profile's start and stop: V8 answers an in-process inspector session at
 * once): not the app's lag, so not counted as lag (a CPU-profiled request must not pause the
 * capture of the requests after it). Each lag source takes what it grew by in its window: every
 * app of the process has its own source, and each one's windows leave the block out.
 */
let ownBlockedMs = 0

/** Says that the profiler itself held the loop for `ms` (what a window counts as lag leaves it out). */
export function profilerBlocked (ms: number): void {
  if (ms > 0) ownBlockedMs += ms
}

/** The profiler's own blocking in all, in milliseconds: what a window takes out is what this grew by. */
export function profilerBlockedMs (): number {
  return ownBlockedMs
}

/**
 * A window's lag, in milliseconds, from its histogram (the mean delay of its `samples`, in ms),
 * how late its timer came, and the profiler's own blocking in it: a block of the profiler's
 * delayed one sample by its length and the timer by as much; both are taken out.
 */
export function windowLag (meanMs: number, samples: number, lateMs: number, ownMs: number): number {
  const mean = samples === 0 ? 0 : meanMs - ownMs / samples - RESOLUTION_MS
  return Math.max(0, mean, lateMs - ownMs)
}

/**
 * The process's event loop lag, as @fastify/under-pressure reads it: the mean delay of a
 * `monitorEventLoopDelay` histogram over the last window, less its resolution, read by an
 * unreferenced timer every window (a request reads a field, no clock). A window whose timer
 * came late by more than the window itself (the loop blocked) counts that delay, less the
 * profiler's own blocking (`profilerBlocked`). The lag said is
 * the lesser of the last two windows': a lag that lasts a second, not one block.
 */
export function eventLoopLag (): LagSource {
  const histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  histogram.enable()
  let lag = 0
  let previous = 0
  let readAt = performance.now()
  let ownAtRead = ownBlockedMs
  const timer = setInterval(() => {
    const now = performance.now()
    const window = windowLag(histogram.count === 0 ? 0 : histogram.mean / 1e6, histogram.count, now - readAt - LAG_WINDOW_MS, ownBlockedMs - ownAtRead)
    ownAtRead = ownBlockedMs
    // lag that lasts: the lesser of the last two windows, so that one block (the app's start
    // compiling its code, one long synchronous task) pauses nothing, while a loop that stays
    // behind for a second does
    lag = Math.min(window, previous)
    previous = window
    histogram.reset()
    readAt = now
  }, LAG_WINDOW_MS)
  timer.unref()
  return {
    lagMs: () => lag,
    close () {
      clearInterval(timer)
      histogram.disable()
    }
  }
}

/**
 * Capture that pauses while the event loop lags: past `thresholdMs` it pauses (counted once per
 * pause), and resumes once the lag is under half of it (so that a loop hovering at the threshold
 * does not switch it at every window). Requests not profiled meanwhile are counted.
 */
export class LagPause {
  /** times capture paused */
  pauses = 0
  /** requests not profiled while it was paused */
  notProfiled = 0
  private pausedNow = false

  constructor (readonly thresholdMs: number, private lagSource: LagSource) {}

  /** Where the lag is read; a test sets its own (`profiler.guards.lag.source = …`), the one before is closed. */
  get source (): LagSource {
    return this.lagSource
  }

  set source (source: LagSource) {
    this.lagSource.close()
    this.lagSource = source
  }

  /** Whether capture is paused now: reads the lag, pausing or resuming on what it says. */
  get paused (): boolean {
    const lag = this.lagSource.lagMs()
    if (this.pausedNow) {
      if (lag < this.thresholdMs / 2) this.pausedNow = false
    } else if (lag > this.thresholdMs) {
      this.pausedNow = true
      this.pauses++
    }
    return this.pausedNow
  }

  /** Whether it was paused at the last reading (the pages say so; reading it does not read the lag). */
  get pausedAtLastReading (): boolean {
    return this.pausedNow
  }

  close (): void {
    this.lagSource.close()
  }
}
