import { createRequire } from 'node:module'
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest, preValidationHookHandler } from 'fastify'
import fastifyFormbody from '@fastify/formbody'
import type { Kernel } from '../src/kernel/kernel.js'
import type { ResolvedCoreOptions } from '../src/config/options.js'
import { errorCodes } from '../src/errors/codes.js'
import type { ResolvedFirewall, ResolvedSecurityOptions } from '../src/security/options.js'
import { Security } from '../src/security/security.js'
import { firewallSubscriptions } from '../src/security/firewall-listener.js'
import { securityExceptionSubscriptions } from '../src/security/exception-listener.js'
import { checkFormLogin, logout } from '../src/security/form-login.js'
import { CSRF_SESSION_KEY, csrfTokenOf } from '../src/security/csrf.js'
import type { CsrfTokenSource } from '../src/security/csrf.js'
import { kCsrfToken } from '../src/symbols.js'
import type { SessionCookie } from './session.js'

// required, not imported: its typings need the DOM's CryptoKey (an app compiled for Node alone
// lacks it); fastify-kernel/session declares reply.generateCsrf and app.csrfProtection for apps
const fastifyCsrfProtection = createRequire(import.meta.url)('@fastify/csrf-protection') as FastifyPluginAsync<{ sessionPlugin: '@fastify/session', sessionKey: string, getToken: (request: FastifyRequest) => string | undefined }>

/**
 * The `security` option: firewalls (kernel.request, 8), the security exception listener
 * (kernel.exception, 1), form login and logout routes with their CSRF tokens. Loaded only when
 * the option is given (route access checks and `request.security` are in request-security.ts).
 */
export async function registerSecurity (app: FastifyInstance, kernel: Kernel, resolved: ResolvedSecurityOptions, options: ResolvedCoreOptions, sessionCookie: SessionCookie | null): Promise<void> {
  const { options: securityOptions, firewalls, accessControl, passwordChecks } = resolved
  const security = new Security(securityOptions, firewalls, accessControl, passwordChecks, options.clock)
  app.decorate('kernelSecurity', security)
  if (firewalls.some((f) => (f.formLogin?.csrfParameter ?? f.logout?.csrfParameter ?? null) !== null)) await registerCsrfProtection(app)
  // login redirects are absolute only when trustedHosts vets the host they would name
  const hostsVetted = options.trustedHosts.length > 0
  kernel.subscribe([...firewallSubscriptions(security), ...securityExceptionSubscriptions(hostsVetted)], 'security')
  for (const firewall of firewalls) {
    for (const path of [firewall.formLogin?.checkPath, firewall.logout?.path]) {
      // the session only exists under its cookie's path
      if (path !== undefined && sessionCookie !== null && sessionCookie.path !== '/' && path !== sessionCookie.path && !path.startsWith(sessionCookie.path.replace(/\/?$/, '/'))) {
        throw new errorCodes.KERNEL_INVALID_OPTIONS(`invalid "security" options: firewall "${firewall.name}": "${path}" is outside the session cookie's path "${sessionCookie.path}".`)
      }
    }
    if (firewall.formLogin !== null || firewall.logout !== null) await registerFirewallRoutes(app, security, firewall, sessionCookie!, hostsVetted)
  }
}

/**
 * @fastify/csrf-protection on the session (Symfony keeps CSRF tokens in the session too):
 * `reply.generateCsrf()` for the forms, `app.csrfProtection` for the checks. Its refusals become
 * 403 `Invalid CSRF token.` in the security exception listener.
 */
async function registerCsrfProtection (app: FastifyInstance): Promise<void> {
  if (app.hasDecorator('csrfProtection')) {
    throw new errorCodes.KERNEL_INVALID_OPTIONS('@fastify/csrf-protection is already registered. The kernel registers it for the CSRF tokens of form login and logout: remove your registration (app.csrfProtection and reply.generateCsrf() stay available), or set formLogin.csrf and logout.csrf to false.')
  }
  await app.register(fastifyCsrfProtection, { sessionPlugin: '@fastify/session', sessionKey: CSRF_SESSION_KEY, getToken: csrfTokenOf })
}

/**
 * A firewall's own routes, in a child context with its own urlencoded body parser (so it never
 * clashes with the app's parsers): the form login check (POST `checkPath`; the app serves the
 * form) and logout (GET or POST `path`). With CSRF on, the token is checked before anything
 * else (preValidation): a forged request never reaches a password check or the session.
 */
async function registerFirewallRoutes (app: FastifyInstance, security: Security, firewall: ResolvedFirewall, cookie: SessionCookie, hostsVetted: boolean): Promise<void> {
  await app.register(async function firewallRoutes (child) {
    await child.register(fastifyFormbody, { bodyLimit: 16 * 1024 })
    // with CSRF on, the route says where its token is, and checks it (the decorator
    // @fastify/csrf-protection added: typed for apps by fastify-kernel/session only)
    const { csrfProtection } = child as unknown as { csrfProtection: preValidationHookHandler }
    const routeOptions = (name: string, parameter: string | null, query: boolean) => parameter === null
      ? { config: { name } }
      : { config: { name, [kCsrfToken]: { parameter, query } satisfies CsrfTokenSource }, preValidation: csrfProtection }
    const form = firewall.formLogin
    if (form !== null) {
      child.post(form.checkPath, routeOptions(`_security_check_${firewall.name}`, form.csrfParameter, false), async function securityLoginCheck (request, reply) {
        return reply.redirect(await checkFormLogin(security, firewall, request, hostsVetted), 302)
      })
    }
    const out = firewall.logout
    if (out !== null) {
      child.route({
        method: ['GET', 'POST'],
        url: out.path,
        // a GET carries its token in the query: Symfony's logout link (`/logout?_csrf_token=...`)
        ...routeOptions(`_security_logout_${firewall.name}`, out.csrfParameter, true),
        handler: async function securityLogout (request, reply) {
          const location = await logout(firewall, request, hostsVetted)
          reply.clearCookie(cookie.name, { path: cookie.path, ...(cookie.domain === undefined ? {} : { domain: cookie.domain }) })
          return reply.redirect(location, 302)
        }
      })
    }
  })
}
