import { withDeadline } from '../redis/commands.js'
import { asKernelTraffic } from '../kernel/async-context.js'
import { ServiceUnavailableHttpException } from '../errors/exceptions.js'
import { ThrottledWarning } from '../log/throttled-warning.js'
import type { SessionStore } from './memory-store.js'

type StoredSession = Record<string, unknown> | null | undefined

function promised<T> (call: (callback: (error: unknown, value?: T) => void) => void): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    call((error, value) => { if (error !== null && error !== undefined) reject(error); else resolve(value) })
  })
}

/**
 * Puts an external session store (Redis) behind the rules a request can live with: every call
 * is bounded in time, and a store that fails or is slow never becomes a 500 on a public page.
 *
 * - read fails: **closed**. The request is anonymous (no session), a warning is logged, and the
 *   session id is noted in `unreadable` so the caller keeps the client's cookie: the session may
 *   well still exist once the store answers again.
 * - write fails: the write is lost (logged); the response goes out. Nothing was granted by it.
 * - destroy fails (logout, login's regenerate): a 503, because answering "logged out" while the
 *   session still exists in the store would be a lie the user cannot see.
 */
export class GuardedSessionStore implements SessionStore {
  /** ids whose read failed, for the request that asked; bounded */
  readonly unreadable = new Set<string>()
  private readonly readFailure: ThrottledWarning
  private readonly writeFailure: ThrottledWarning

  constructor (private readonly store: SessionStore, private readonly timeoutMs: number, log: { warn: (fields: object, message: string) => void }) {
    this.readFailure = new ThrottledWarning(log, 'fastify-kernel: the session store could not be read; the request goes on without its session (anonymous)')
    this.writeFailure = new ThrottledWarning(log, 'fastify-kernel: the session store could not be written; the change to the session is lost')
  }

  /** The store's own commands are the kernel's traffic (the profiler shows them apart), the session id in them masked. */
  private call (sessionId: string, fn: () => void): void {
    asKernelTraffic({ purpose: 'session', secret: sessionId }, fn)
  }

  get (sessionId: string, callback: (error: unknown, session?: Record<string, unknown> | null) => void): void {
    withDeadline(promised<StoredSession>((done) => { this.call(sessionId, () => { this.store.get(sessionId, (error, value) => { done(error, value as StoredSession) }) }) }), this.timeoutMs, 'a session read').then(
      (session) => { callback(null, session ?? null) },
      (error: unknown) => {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') { callback(null, null); return }
        if (this.unreadable.size >= 10_000) this.unreadable.clear()
        this.unreadable.add(sessionId)
        this.readFailure.warn({ err: error })
        callback(null, null)
      })
  }

  set (sessionId: string, session: object, callback: (error?: unknown) => void): void {
    withDeadline(promised<void>((done) => { this.call(sessionId, () => { this.store.set(sessionId, session, done) }) }), this.timeoutMs, 'a session write').then(
      () => { callback() },
      (error: unknown) => { this.writeFailure.warn({ err: error }); callback() })
  }

  destroy (sessionId: string, callback: (error?: unknown) => void): void {
    withDeadline(promised<void>((done) => { this.call(sessionId, () => { this.store.destroy(sessionId, done) }) }), this.timeoutMs, 'a session removal').then(
      () => { callback() },
      (error: unknown) => { callback(new ServiceUnavailableHttpException('The session store is unavailable; the session could not be ended. Try again.', error)) })
  }
}
