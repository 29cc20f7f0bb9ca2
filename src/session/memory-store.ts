import { LRUCache } from 'lru-cache'
import type { Clock } from '../clock.js'
import { lruCacheClock, systemClock } from '../clock.js'

/**
 * The session store interface of @fastify/session (and express-session): callbacks, ids in,
 * plain session objects out. Any compatible store (Redis, a database) can replace the default.
 */
export interface SessionStore {
  // method syntax on purpose: real stores (connect-redis, express-session's) type their
  // callbacks more loosely, and return promises; either is accepted
  get (sessionId: string, callback: (error: unknown, session?: unknown) => void): unknown
  set (sessionId: string, session: object, callback: (error?: unknown) => void): unknown
  destroy (sessionId: string, callback: (error?: unknown) => void): unknown
}

export interface MemorySessionStoreOptions {
  /** at most this many sessions of logged-in users; the least recently used goes first */
  maxSessions?: number
  /**
   * at most this many other sessions (a remembered target path, flash messages), in a bound of
   * their own: anonymous requests, however many, never push a logged-in user out. Default: maxSessions
   */
  maxAnonymousSessions?: number
  /** whether a session holds a logged-in user (default: none does; one bound for all) */
  isAuthenticated?: (session: Record<string, unknown>) => boolean
  /** a session unused for this many seconds is gone */
  ttlSeconds?: number
  /** what ages the sessions (default the system clock): a test advances its own instead of waiting */
  clock?: Clock
}

/**
 * The default store: in memory, bounded (LRU) and expiring (idle TTL, renewed on each read),
 * so that neither abandoned sessions nor a flood of logins can grow the process without end.
 * Sessions of logged-in users and the others are bounded separately, so a flood of anonymous
 * requests that each store something (10,000 GET /admin remembering their target path) only
 * evicts other anonymous sessions. Sessions are kept as JSON, as a real store would: no object
 * is shared between requests.
 */
export class MemorySessionStore implements SessionStore {
  private readonly authenticated: LRUCache<string, string>
  private readonly anonymous: LRUCache<string, string>
  private readonly isAuthenticated: (session: Record<string, unknown>) => boolean

  constructor (options: MemorySessionStoreOptions = {}) {
    const clock = options.clock ?? systemClock
    const cache = (max: number) => new LRUCache<string, string>({
      max,
      ttl: (options.ttlSeconds ?? 1800) * 1000,
      updateAgeOnGet: true,
      ...lruCacheClock(clock)
    })
    const max = options.maxSessions ?? 10_000
    this.authenticated = cache(max)
    this.anonymous = cache(options.maxAnonymousSessions ?? max)
    this.isAuthenticated = options.isAuthenticated ?? (() => false)
  }

  get size (): number {
    return this.authenticated.size + this.anonymous.size
  }

  get (sessionId: string, callback: (error: unknown, session?: Record<string, unknown> | null) => void): void {
    const raw = this.authenticated.get(sessionId) ?? this.anonymous.get(sessionId)
    callback(null, raw === undefined ? null : JSON.parse(raw) as Record<string, unknown>)
  }

  set (sessionId: string, session: object, callback: (error?: unknown) => void): void {
    const json = JSON.stringify(session)
    // a session moves between the bounds when a user logs in or out under the same id
    const [into, out] = this.isAuthenticated(session as Record<string, unknown>) ? [this.authenticated, this.anonymous] : [this.anonymous, this.authenticated]
    out.delete(sessionId)
    into.set(sessionId, json)
    callback()
  }

  destroy (sessionId: string, callback: (error?: unknown) => void): void {
    this.authenticated.delete(sessionId)
    this.anonymous.delete(sessionId)
    callback()
  }
}
