/**
 * The request stage's services, each a thin wiring of `src/session`, `src/locale` and
 * `src/security` to the kernel's stages:
 *
 *   kernel.request     session (128) · locale default (100) · [router 32] · locale from `_locale` (16) · firewall (8)
 *   kernel.controller_arguments   route access checks (`config.isGranted`, 0)
 *   kernel.exception   security: auth errors → 401 challenge / 403 (1, before logger and error controller)
 *   kernel.response    session and locale data for the profiler, `Content-Language`
 */
import cluster from 'node:cluster'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import fastifyFlash from '@fastify/flash'
import fastifyFormbody from '@fastify/formbody'
import type { Kernel } from '../src/kernel/kernel.js'
import type { ResolvedKernelOptions } from '../src/config/options.js'
import { Priority, Stage } from '../src/kernel/stages.js'
import { KernelError } from '../src/errors/kernel-errors.js'
import { resolveSessionOptions } from '../src/session/options.js'
import { MemorySessionStore } from '../src/session/memory-store.js'
import { GuardedSessionStore } from '../src/session/guarded-store.js'
import { holdsUser } from '../src/security/session-token.js'
import { createSessionCollector, createSessionListener } from '../src/session/session-listeners.js'
import { resolveLocaleOptions } from '../src/locale/options.js'
import { contentLanguage, createDefaultLocaleListener, createRouteLocaleListener } from '../src/locale/locale-listeners.js'
import { resolveSecurityOptions } from '../src/security/options.js'
import type { ResolvedFirewall } from '../src/security/options.js'
import { Security } from '../src/security/security.js'
import { createFirewallListener } from '../src/security/firewall-listener.js'
import { createSecurityExceptionListener } from '../src/security/exception-listener.js'
import { accessCheck, isGrantedCheck } from '../src/security/access-check.js'
import { checkFormLogin, logout } from '../src/security/form-login.js'

/** Symfony's security ExceptionListener priority: before the logger (0) and the error controller. */
const SECURITY_EXCEPTION_PRIORITY = 1
/** Data for the profiler is complete before it collects (-100). */
const COLLECT_PRIORITY = -64

/**
 * Sessions: @fastify/cookie, @fastify/session and @fastify/flash. Called by the kernel BEFORE it
 * installs its own onRequest hook: @fastify/session loads the session in an onRequest hook of
 * its own, which must run before kernel.request so that the session is there at priority 128
 * (and for the firewall at 8). Its onSend hook, likewise first, has saved the session and set
 * the cookie before kernel.response runs. Returns the session cookie, or null when sessions are off.
 */
export async function registerSession (app: FastifyInstance, kernel: Kernel, options: ResolvedKernelOptions): Promise<SessionCookie | null> {
  if (options.session === undefined) return null
  const session = resolveSessionOptions(options.session)
  const signer = new fastifyCookie.Signer(session.secrets, 'sha256')
  const guarded = session.store === undefined ? undefined : new GuardedSessionStore(session.store, session.storeTimeoutMs, app.log)
  const store = guarded ?? new MemorySessionStore({ maxSessions: session.maxSessions, maxAnonymousSessions: session.maxAnonymousSessions, ttlSeconds: session.ttl, isAuthenticated: holdsUser })
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

  kernel.on(Stage.REQUEST, createSessionListener(session.cookieName, (value) => signer.unsign(value)), { priority: Priority.SESSION, name: 'session' })
  kernel.on(Stage.RESPONSE, createSessionCollector(session.cookieName), { priority: COLLECT_PRIORITY, name: 'session collector' })
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

/** Locale, firewall and route access checks; after the kernel's lifecycle is installed. */
export async function registerRequestServices (app: FastifyInstance, kernel: Kernel, options: ResolvedKernelOptions, sessionCookie: SessionCookie | null): Promise<void> {
  // typed on every request (null without the security option), so route checks and controllers can read it
  app.decorateRequest('security', null)
  registerLocale(app, kernel, options)
  registerAccessChecks(app, kernel)
  if (options.security !== undefined) await registerSecurity(app, kernel, options, sessionCookie)
}

function registerLocale (app: FastifyInstance, kernel: Kernel, options: ResolvedKernelOptions): void {
  if (options.locale === undefined) return
  const locale = resolveLocaleOptions(options.locale)
  app.decorateRequest('locale', locale.default)
  kernel.on(Stage.REQUEST, createDefaultLocaleListener(locale), { priority: Priority.LOCALE_DEFAULT, name: 'locale default' })
  kernel.on(Stage.REQUEST, createRouteLocaleListener(locale), { priority: Priority.LOCALE_FROM_ROUTE, name: 'locale from route' })
  if (locale.contentLanguage) kernel.on(Stage.RESPONSE, contentLanguage, { priority: COLLECT_PRIORITY, name: 'content language' })
}

/**
 * `config.isGranted` works with or without the `security` option (without it every request
 * is anonymous), so that a route meant to be protected is never silently open. The listener
 * is added with the first route that uses it: apps without access checks pay nothing.
 */
function registerAccessChecks (app: FastifyInstance, kernel: Kernel): void {
  let installed = false
  app.addHook('onRoute', (route) => {
    const check = (route.config as { isGranted?: unknown } | undefined)?.isGranted
    if (check === undefined) return
    if (!isGrantedCheck(check)) {
      throw new KernelError('KERNEL_INVALID_OPTIONS', `fastify-kernel: route "${String(route.method)} ${route.url}": config.isGranted must be a role, a non-empty list of roles, or a function (user, request) => boolean.`)
    }
    if (installed) return
    installed = true
    kernel.on(Stage.CONTROLLER_ARGUMENTS, accessCheck, { priority: Priority.ACCESS_CHECK, name: 'access check' })
  })
}

async function registerSecurity (app: FastifyInstance, kernel: Kernel, options: ResolvedKernelOptions, sessionCookie: SessionCookie | null): Promise<void> {
  const { options: securityOptions, firewalls, accessControl } = resolveSecurityOptions(options.security, sessionCookie !== null)
  const security = new Security(securityOptions, firewalls, accessControl)
  kernel.on(Stage.REQUEST, createFirewallListener(security), { priority: Priority.FIREWALL, name: 'firewall' })
  kernel.on(Stage.EXCEPTION, createSecurityExceptionListener(), { priority: SECURITY_EXCEPTION_PRIORITY, name: 'security exceptions' })
  for (const firewall of firewalls) {
    for (const path of [firewall.formLogin?.checkPath, firewall.logout?.path]) {
      // the session only exists under its cookie's path
      if (path !== undefined && sessionCookie !== null && sessionCookie.path !== '/' && path !== sessionCookie.path && !path.startsWith(sessionCookie.path.replace(/\/?$/, '/'))) {
        throw new KernelError('KERNEL_INVALID_OPTIONS', `fastify-kernel: invalid "security" options: firewall "${firewall.name}": "${path}" is outside the session cookie's path "${sessionCookie.path}".`)
      }
    }
    if (firewall.formLogin !== null) await registerLoginCheck(app, security, firewall)
    if (firewall.logout !== null) registerLogout(app, firewall, sessionCookie!)
  }
}

/**
 * The form login check: POST `checkPath`, with its own urlencoded body parser (in a child
 * context, so it never clashes with the app's parsers). The app serves the form (GET).
 */
async function registerLoginCheck (app: FastifyInstance, security: Security, firewall: ResolvedFirewall): Promise<void> {
  await app.register(async function loginCheck (child) {
    await child.register(fastifyFormbody, { bodyLimit: 16 * 1024 })
    child.post(firewall.formLogin!.checkPath, { config: { name: `_security_check_${firewall.name}` } }, async function securityLoginCheck (request, reply) {
      return reply.redirect(await checkFormLogin(security, firewall, request), 302)
    })
  })
}

/** Logout: GET or POST `path` destroys the session, clears its cookie, redirects to `target`. */
function registerLogout (app: FastifyInstance, firewall: ResolvedFirewall, cookie: SessionCookie): void {
  app.route({
    method: ['GET', 'POST'],
    url: firewall.logout!.path,
    config: { name: `_security_logout_${firewall.name}` },
    handler: async function securityLogout (request, reply) {
      const location = await logout(firewall, request)
      reply.clearCookie(cookie.name, { path: cookie.path, ...(cookie.domain === undefined ? {} : { domain: cookie.domain }) })
      return reply.redirect(location, 302)
    }
  })
}
