/**
 * `fastify-kernel/session`: the session stores (the default one in memory, and the guard the
 * kernel puts around a shared one), the types of the `session` option, and the types of what
 * the option adds to requests and replies (flash messages) and form-login CSRF adds (tokens).
 * An app with the option imports them (`import type {} from 'fastify-kernel/session'`); they
 * are kept out of the package entry so that an app without sessions cannot compile calls that
 * would fail at run time. Declared as the plugins themselves declare them, so an app that imports
 * their own typings merges with these (@fastify/flash's need @fastify/secure-session,
 * @fastify/csrf-protection's the DOM).
 */
import type {} from 'fastify'

export { MemorySessionStore } from './memory-store.js'
export type { SessionStore, MemorySessionStoreOptions } from './memory-store.js'
export { GuardedSessionStore } from './guarded-store.js'
export { MIN_SECRET_LENGTH } from './options.js'
export type { SessionOptions } from './options.js'
export type { SessionCollected } from './collector.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * @fastify/csrf-protection (form login or logout with CSRF tokens): checks the request's
     * token, as a `preValidation` or `preHandler` hook of a route; a refusal is 403 `Invalid CSRF
     * token.`.
     */
    csrfProtection (request: FastifyRequest, reply: FastifyReply, done: () => void): void
  }

  interface FastifyRequest {
    /** @fastify/flash (`session` option): adds a flash message */
    flash: (this: FastifyRequest, type: string, ...message: string[] | [string[]]) => number
  }

  interface FastifyReply {
    /** @fastify/csrf-protection (form login or logout with CSRF tokens): a CSRF token of the request's session */
    generateCsrf (options?: { userInfo?: string }): string
    /** @fastify/flash (`session` option): reads and clears the flash messages */
    flash: (this: FastifyReply, type?: string) => { [k: string]: string[] } | string[]
  }
}
