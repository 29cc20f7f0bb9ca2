import type { Clock } from '../../../clock.js'

/** CPU profiles that may start in one window: each start blocks the process 0.3 to 0.85 s (V8 lists every compiled function). */
export const MAX_CPU_PROFILES = 3
/** The window of that bound. */
export const CPU_PROFILE_WINDOW_MS = 10_000

/**
 * The rate of CPU profile starts, over a sliding window on the kernel's clock: past it, a request
 * that asks for one is served unprofiled and told why (at most MAX_CPU_PROFILES per
 * CPU_PROFILE_WINDOW_MS keeps the blocking starts to a few percent of the server's time, whatever
 * a client sends: without it, 160 `X-Kernel-Profile: cpu` requests held an ordinary one 13.6 s).
 */
export class CpuProfileRate {
  /** monotonic times of the starts in the window, oldest first */
  private readonly starts: number[] = []

  constructor (private readonly clock: Clock, readonly max = MAX_CPU_PROFILES, readonly windowMs = CPU_PROFILE_WINDOW_MS) {}

  /** Takes a start if the rate allows one now (undefined); otherwise the milliseconds until it will. */
  take (): number | undefined {
    const now = this.clock.monotonic()
    while (this.starts.length > 0 && now - this.starts[0]! >= this.windowMs) this.starts.shift()
    if (this.starts.length >= this.max) return Math.max(1, this.starts[0]! + this.windowMs - now)
    this.starts.push(now)
    return undefined
  }

  /** Gives back a start that did not happen (another profile was running). */
  giveBack (): void {
    this.starts.pop()
  }
}
