import { LRUCache } from 'lru-cache'
import { RateLimiterCompatibleAbstract, RateLimiterRes } from 'rate-limiter-flexible'
import type { Clock } from '../clock.js'
import { lruCacheClock } from '../clock.js'
import { errorCodes } from '../errors/codes.js'

/** A key's current window: mutated in place, so that counting never moves its end. */
interface Window { consumed: number }

/**
 * rate-limiter-flexible's RateLimiterMemory, reading a Clock. RateLimiterMemory (11.x) reads
 * Date.now() in its storage and takes no clock, so a test could only wait its windows out in real
 * time. This is a limiter of the library's own extension point (RateLimiterCompatibleAbstract:
 * accepted wherever its limiters are, as the Redis limiter's insurance) with RateLimiterMemory's
 * counting: a window of `duration` seconds starts with a key's first points; points given back
 * lower the count without moving the window's end; once it has ended, the next points start a
 * new one. Windows are lru-cache TTLs on the clock, forgotten when they end, as RateLimiterMemory's.
 * Options of single calls (customDuration), blocking and even spreading are not supported: login
 * throttling uses none of them.
 */
export class ClockedMemoryLimiter extends RateLimiterCompatibleAbstract {
  private readonly windows: LRUCache<string, Window>

  constructor (private readonly prefix: string, private readonly points: number, private readonly duration: number, clock: Clock) {
    super()
    // unbounded in count, as RateLimiterMemory's map: bounded by the windows' ends
    this.windows = new LRUCache<string, Window>({ ttl: duration * 1000, ttlAutopurge: true, ...lruCacheClock(clock) })
    // the base class's accessors throw until a subclass defines them, and its typings declare
    // properties, which TypeScript lets no subclass override with accessors: defined here. A
    // limiter taking this one as its insurance sets its own values (0 and false: none)
    Object.defineProperties(this, {
      keyPrefix: { value: prefix },
      blockDuration: { get: () => 0, set: (value: number) => { if (value !== 0) throw new errorCodes.KERNEL_INVALID_OPTIONS('ClockedMemoryLimiter does not block keys') } },
      execEvenly: { get: () => false, set: (value: boolean) => { if (value) throw new errorCodes.KERNEL_INVALID_OPTIONS('ClockedMemoryLimiter does not spread points') } }
    })
  }

  private key (key: string | number): string {
    return this.prefix === '' ? String(key) : `${this.prefix}:${key}`
  }

  private result (key: string, consumed: number, first: boolean): RateLimiterRes {
    const remaining = first ? this.duration * 1000 : this.windows.getRemainingTTL(key)
    // -1: a window that never ends, as rate-limiter-flexible says it
    return new RateLimiterRes(Math.max(this.points - consumed, 0), Number.isFinite(remaining) ? remaining : -1, consumed, first)
  }

  private add (key: string | number, points: number): RateLimiterRes {
    const rlKey = this.key(key)
    const window = this.windows.get(rlKey)
    if (window === undefined) {
      this.windows.set(rlKey, { consumed: points })
      return this.result(rlKey, points, true)
    }
    window.consumed += points
    return this.result(rlKey, window.consumed, false)
  }

  /** Rejects with the RateLimiterRes when the window's points are spent, as RateLimiterMemory. */
  override async consume (key: string | number, points = 1): Promise<RateLimiterRes> {
    const res = this.add(key, points)
    if (res.consumedPoints > this.points) throw res
    return res
  }

  override async penalty (key: string | number, points = 1): Promise<RateLimiterRes> {
    return this.add(key, points)
  }

  override async reward (key: string | number, points = 1): Promise<RateLimiterRes> {
    return this.add(key, -points)
  }

  override async get (key: string | number): Promise<RateLimiterRes | null> {
    const rlKey = this.key(key)
    const window = this.windows.get(rlKey)
    return window === undefined ? null : this.result(rlKey, window.consumed, false)
  }

  override async set (key: string | number, points: number, secDuration: number): Promise<RateLimiterRes> {
    const rlKey = this.key(key)
    // 0: a window that never ends
    this.windows.set(rlKey, { consumed: points }, { ttl: (secDuration >= 0 ? secDuration : this.duration) * 1000 })
    return this.result(rlKey, points, false)
  }

  override async block (key: string | number, secDuration: number): Promise<RateLimiterRes> {
    return this.set(key, this.points + 1, secDuration)
  }

  override async delete (key: string | number): Promise<boolean> {
    return this.windows.delete(this.key(key))
  }
}
