import { LRUCache } from 'lru-cache'

/**
 * The session store interface of @fastify/session (and express-session): callbacks, ids in,
 * plain session objects out. Any compatible store (Redis, a database) can replace the default.
 */
export interface SessionStore {
  get: (sessionId: string, callback: (error: unknown, session?: Record<string, unknown> | null) => void) => void
  set: (sessionId: string, session: object, callback: (error?: unknown) => void) => void
  destroy: (sessionId: string, callback: (error?: unknown) => void) => void
}

export interface MemorySessionStoreOptions {
  /** at most this many sessions; the least recently used goes first */
  maxSessions?: number
  /** a session unused for this many seconds is gone */
  ttlSeconds?: number
  /** the clock, for tests (`performance.now()`-like, in milliseconds) */
  now?: () => number
}

/**
 * The default store: in memory, bounded (LRU) and expiring (idle TTL, renewed on each read),
 * so that neither abandoned sessions nor a flood of logins can grow the process without end.
 * Sessions are kept as JSON, as a real store would: no object is shared between requests.
 */
export class MemorySessionStore implements SessionStore {
  private readonly cache: LRUCache<string, string>

  constructor (options: MemorySessionStoreOptions = {}) {
    const now = options.now
    this.cache = new LRUCache<string, string>({
      max: options.maxSessions ?? 10_000,
      ttl: (options.ttlSeconds ?? 1800) * 1000,
      updateAgeOnGet: true,
      // an injected clock is read on every check (lru-cache otherwise caches the time for 1 ms)
      ...(now === undefined ? {} : { perf: { now }, ttlResolution: 0 })
    })
  }

  get size (): number {
    return this.cache.size
  }

  get (sessionId: string, callback: (error: unknown, session?: Record<string, unknown> | null) => void): void {
    const raw = this.cache.get(sessionId)
    callback(null, raw === undefined ? null : JSON.parse(raw) as Record<string, unknown>)
  }

  set (sessionId: string, session: object, callback: (error?: unknown) => void): void {
    this.cache.set(sessionId, JSON.stringify(session))
    callback()
  }

  destroy (sessionId: string, callback: (error?: unknown) => void): void {
    this.cache.delete(sessionId)
    callback()
  }
}
