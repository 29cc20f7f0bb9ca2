import type { Clock } from '../src/clock.js'

/**
 * A clock that moves only when the test says so; both readings advance together. `now()` starts
 * at the real time, so that timestamps the real clock gave (a profile's `time`) are of the same
 * era. `monotonic()` starts at 1000: lru-cache takes a start of 0 for "no TTL", and whole numbers
 * keep differences exact (performance.now()'s fractions would make an age of exactly the TTL
 * read as a hair more).
 */
export class ManualClock implements Clock {
  private readonly epoch = Date.now()
  private elapsed = 0

  now (): number {
    return this.epoch + this.elapsed
  }

  monotonic (): number {
    return 1000 + this.elapsed
  }

  advance (ms: number): void {
    this.elapsed += ms
  }
}
