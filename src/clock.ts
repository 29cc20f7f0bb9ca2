/**
 * The time the kernel's stores read: profile ages (the profile storages), idle expiry (the
 * default session store), login-throttling windows. Injected so that a test advances it instead
 * of waiting; `systemClock` everywhere else. Request timings, profile timestamps and timeouts on
 * I/O always use the real time.
 */
export interface Clock {
  /** epoch milliseconds, as Date.now(): compared with stored timestamps */
  now (): number
  /** milliseconds from an arbitrary origin that never goes back, as performance.now(): for ages and delays within the process */
  monotonic (): number
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now()
}

/** Whether `value` can serve as a Clock (option validation). */
export function isClock (value: unknown): value is Clock {
  return typeof (value as Clock | undefined)?.now === 'function' && typeof (value as Clock).monotonic === 'function'
}

/**
 * lru-cache options that make its TTLs read `clock`. The system clock keeps lru-cache's own
 * (performance.now(), cached for 1 ms); another one is read on every check, so that a test
 * advancing it sees the expiry at once.
 */
export function lruCacheClock (clock: Clock): { perf?: { now: () => number }, ttlResolution?: number } {
  return clock === systemClock ? {} : { perf: { now: () => clock.monotonic() }, ttlResolution: 0 }
}
