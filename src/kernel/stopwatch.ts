/** One timed period of a stopwatch event: from a `start()` (or `lap()`) to the next `stop()` (or `lap()`). */
export interface StopwatchPeriod {
  /** milliseconds from the start of the request */
  readonly start: number
  /** milliseconds; null while the period runs */
  readonly duration: number | null
}

/** A named, timed thing the app does in a request, in a category (Symfony's StopwatchEvent). */
export interface StopwatchEvent {
  readonly name: string
  /** what the timeline groups and colours it by (default `default`) */
  readonly category: string
  readonly periods: readonly StopwatchPeriod[]
  /** milliseconds of its ended periods */
  readonly duration: number
  readonly started: boolean
}

/**
 * The app's own timings, shown on the profiler's timeline (Symfony's Stopwatch):
 *
 *     request.kernel.stopwatch.start('pricing', 'domain')
 *     …
 *     request.kernel.stopwatch.stop('pricing')
 *
 * `lap(name)` ends the running period and starts the next. Outside a profiled request
 * (production, a profiler page) it is a no-op that records nothing.
 */
export interface Stopwatch {
  /** starts a period of the event `name` (created, in `category`, on its first start) */
  start (name: string, category?: string): StopwatchEvent
  /** ends the running period of `name`; throws KERNEL_STOPWATCH_NOT_STARTED when none runs */
  stop (name: string): StopwatchEvent
  /** ends the running period of `name` and starts the next one */
  lap (name: string): StopwatchEvent
  isStarted (name: string): boolean
  /** the events so far, in the order they were first started */
  events (): readonly StopwatchEvent[]
}

const IDLE_EVENT: StopwatchEvent = Object.freeze({ name: '', category: 'default', periods: Object.freeze([]), duration: 0, started: false })

/** What `request.kernel.stopwatch` is where nothing is profiled: every call returns at once. */
export const NOOP_STOPWATCH: Stopwatch = Object.freeze({
  start: () => IDLE_EVENT,
  stop: () => IDLE_EVENT,
  lap: () => IDLE_EVENT,
  isStarted: () => false,
  events: () => []
})

declare module './context.js' {
  interface KernelState {
    /** the request's stopwatch, when it is profiled */
    stopwatch: Stopwatch
  }
}
