import { createHash } from 'node:crypto'
import { RateLimiterRedis, RateLimiterRes, RLWrapperTimeouts } from 'rate-limiter-flexible'
import type { RateLimiterLike } from 'rate-limiter-flexible'
import { TooManyLoginAttemptsAuthenticationException } from '../errors/exceptions.js'
import { ClockedMemoryLimiter } from './memory-limiter.js'
import type { Clock } from '../clock.js'
import { systemClock } from '../clock.js'
import { asKernelTraffic } from '../kernel/async-context.js'

/** A firewall's limits: `maxAttempts` failed logins per user name and client per `interval` seconds. */
export interface LoginThrottlingLimits {
  maxAttempts: number
  interval: number
}

/**
 * Where the counters live. Default: in this process (memory, its windows on the kernel's clock).
 * `redis`: an ioredis client (or node-redis 4+), so that replicas share their counters; each
 * call is bounded by `commandTimeout` ms, and while Redis fails the counters fall back to this
 * process's memory (rate-limiter-flexible's insurance limiter) rather than failing logins.
 */
export interface LoginThrottlingStore {
  redis: { client: object, prefix?: string, commandTimeout?: number }
}

/** Creates one counter: `points` per `duration` seconds, under its own key prefix. */
export type CounterFactory = (name: string, points: number, duration: number) => RateLimiterLike

export const DEFAULT_REDIS_PREFIX = 'fastify-kernel:login:'
export const DEFAULT_REDIS_COMMAND_TIMEOUT = 250

/** `clock` times the windows of the counters kept in memory; Redis times the expiry of its own keys. */
export function counterFactory (store: LoginThrottlingStore | undefined, clock: Clock = systemClock): CounterFactory {
  const memory: CounterFactory = (name, points, duration) => new ClockedMemoryLimiter(name, points, duration, clock)
  if (store === undefined) return memory
  const { client, prefix = DEFAULT_REDIS_PREFIX, commandTimeout = DEFAULT_REDIS_COMMAND_TIMEOUT } = store.redis
  return (name, points, duration) => {
    const insuranceLimiter = memory(name, points, duration)
    const limiter = new RateLimiterRedis({ storeClient: client, keyPrefix: prefix + name, points, duration, insuranceLimiter, rejectIfRedisNotReady: true })
    return new RLWrapperTimeouts({ limiter, timeoutMs: commandTimeout, insuranceLimiter })
  }
}

/** Counter keys are hashes: the store never holds a user name or an address in plain text. */
function hashKey (data: string): string {
  return createHash('sha256').update(data, 'utf8').digest('base64url').slice(0, 16)
}

type Taken = Array<[RateLimiterLike, string]>

/** The counters' Redis commands are the kernel's own traffic: the profiler shows them apart. */
const THROTTLING = { purpose: 'login throttling' }

/** An attempt counted by reserve(): what to give back once its outcome is known. */
export interface LoginReservation {
  /** the attempt does not count at all (it succeeded) */
  giveBack: () => Promise<void>
  /** it counts for the client only, not for the user name (it was refused before its check) */
  giveBackUser: () => Promise<void>
}

/**
 * Symfony's login throttling (DefaultLoginRateLimiter) for one firewall: at most `maxAttempts`
 * failed logins per user name and client, and `5 × maxAttempts` per client, in fixed windows of
 * `interval` seconds that start with the first attempt.
 *
 * Symfony peeks at the counters before checking the password and counts the attempt after it
 * failed, so that concurrent guesses all pass the peek. Here an attempt is counted *before* the
 * check (atomically, in the store) and given back when it succeeds or was refused by these
 * limits: only failures count, as in Symfony, and a burst of concurrent guesses cannot overrun
 * the limit. (An attempt the password-check gate refused keeps its count for the client.)
 */
export class LoginThrottler {
  private readonly perClient: RateLimiterLike
  private readonly perUser: RateLimiterLike

  constructor (firewall: string, limits: LoginThrottlingLimits, counters: CounterFactory) {
    this.perClient = counters(`global:${firewall}:`, 5 * limits.maxAttempts, limits.interval)
    this.perUser = counters(`local:${firewall}:`, limits.maxAttempts, limits.interval)
  }

  /**
   * Counts an attempt of `client` (see clientKey) for `username` (null when there is none, as
   * for a bearer token: only the client's counter applies). Throws
   * TooManyLoginAttemptsAuthenticationException when over a limit; otherwise returns what gives
   * the attempt back.
   */
  async reserve (client: string, username: string | null): Promise<LoginReservation> {
    const counters: Taken = [[this.perClient, hashKey(client)]]
    // Symfony lower-cases the user name: `Admin` and `admin` share their counter
    if (username !== null) counters.push([this.perUser, hashKey(`${username.toLowerCase()}-${client}`)])
    const taken: Taken = []
    for (const [counter, key] of counters) {
      taken.push([counter, key])
      try {
        await asKernelTraffic(THROTTLING, () => counter.consume(key))
      } catch (error) {
        // a refused attempt is not a failed login: it gives back what it took
        await giveBack(taken)
        if (error instanceof RateLimiterRes) throw new TooManyLoginAttemptsAuthenticationException(Math.max(1, Math.ceil(error.msBeforeNext / 1000)))
        throw error
      }
    }
    return { giveBack: () => giveBack(taken), giveBackUser: () => giveBack(taken.slice(1)) }
  }
}

async function giveBack (taken: Taken): Promise<void> {
  // best effort: a counter that cannot be given back only makes the limit a little stricter
  await Promise.all(taken.map(([counter, key]) => asKernelTraffic(THROTTLING, () => counter.reward(key)).catch(() => undefined)))
}
