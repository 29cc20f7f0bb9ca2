/**
 * `fastify-kernel/session`: the session stores (the default one in memory, and the guard the
 * kernel puts around a shared one) and the types of the `session` option.
 */
export { MemorySessionStore } from './memory-store.js'
export type { SessionStore, MemorySessionStoreOptions } from './memory-store.js'
export { GuardedSessionStore } from './guarded-store.js'
export { MIN_SECRET_LENGTH } from './options.js'
export type { SessionOptions } from './options.js'
export type { SessionCollected } from './collector.js'
