import cluster from 'node:cluster'
import { createRequire } from 'node:module'
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import type { Kernel } from '../src/kernel/kernel.js'
import type { ResolvedSessionOptions } from '../src/session/options.js'
import type { Clock } from '../src/clock.js'
import { MemorySessionStore } from '../src/session/memory-store.js'
import { GuardedSessionStore } from '../src/session/guarded-store.js'
import { holdsUser } from '../src/security/session-token.js'
import { sessionSubscriptions } from '../src/session/listeners.js'
import { sessionCollector } from '../src/session/collector.js'

// required, not imported: @fastify/flash's typings need @fastify/secure-session's, and they
// would clash with the kernel's own typing of request.flash / reply.flash (fastify-kernel/session)
const fastifyFlash = createRequire(import.meta.url)('@fastify/flash') as FastifyPluginCallback

/**
 * Sessions: @fastify/cookie, @fastify/session and @fastify/flash. Called by the kernel BEFORE it
 * installs its own onRequest hook: @fastify/session loads the session in an onRequest hook of
 * its own, which must run before kernel.request so that the session is there at priority 128
 * (and for the firewall at 8). Its onSend hook, likewise first, has saved the session and set
 * the cookie before kernel.response runs. Returns the session cookie.
 */
export async function registerSession (app: FastifyInstance, kernel: Kernel, session: ResolvedSessionOptions, clock: Clock): Promise<SessionCookie> {
  const signer = new fastifyCookie.Signer(session.secrets, 'sha256')
  const guarded = session.store === undefined ? undefined : new GuardedSessionStore(session.store, session.storeTimeoutMs, app.log)
  const store = guarded ?? new MemorySessionStore({ maxSessions: session.maxSessions, maxAnonymousSessions: session.maxAnonymousSessions, ttlSeconds: session.ttl, isAuthenticated: holdsUser, clock })
  if (guarded === undefined && cluster.isWorker) {
    app.log.warn('fastify-kernel: sessions are kept in this process\'s memory, and this is a node:cluster worker: a login on one worker is unknown to the others. Give the session option a shared store (Redis).')
  }

  if (!app.hasDecorator('parseCookie')) await app.register(fastifyCookie, { hook: 'onRequest' })
  await app.register(fastifySession, {
    secret: signer,
    cookieName: session.cookieName,
    store: store as never,
    // lazy: a session nobody wrote to is never stored and gets no cookie
    saveUninitialized: false,
    // the cookie has no expiry of its own (idle expiry is the store's): no need to resend it
    rolling: false,
    cookie: session.cookie
  })
  await app.register(fastifyFlash)
  // registered after @fastify/session's onSend, so it runs after it: when the store could not be
  // read, the client keeps its cookie (the session may exist once the store answers again)
  if (guarded !== undefined) app.addHook('onSend', keepUnreadSessionCookie(guarded, session.cookieName, signer))

  kernel.subscribe(sessionSubscriptions(session.cookieName, (value) => signer.unsign(value), (id) => guarded?.unreadable.has(id) === true), 'session')
  kernel.addCollector(sessionCollector(session.cookieName))
  return { name: session.cookieName, path: session.cookie.path, ...(session.cookie.domain === undefined ? {} : { domain: session.cookie.domain }) }
}

export interface SessionCookie { name: string, path: string, domain?: string }

function keepUnreadSessionCookie (store: GuardedSessionStore, cookieName: string, signer: InstanceType<typeof fastifyCookie.Signer>) {
  return async function keepSessionCookie (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    if (store.unreadable.size === 0) return payload
    const cookie = request.cookies?.[cookieName]
    const id = cookie === undefined ? null : signer.unsign(cookie).value
    if (id === null || !store.unreadable.delete(id)) return payload
    const header = reply.getHeader('set-cookie')
    const all = header === undefined ? [] : Array.isArray(header) ? header.map(String) : [String(header)]
    const others = all.filter((value) => !value.startsWith(`${cookieName}=`))
    reply.removeHeader('set-cookie')
    if (others.length > 0) reply.header('set-cookie', others)
    return payload
  }
}
