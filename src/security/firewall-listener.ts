import type { FastifyRequest } from 'fastify'
import type { RequestEvent } from '../kernel/events.js'
import type { KernelContext } from '../kernel/context.js'
import { Priority, Stage } from '../kernel/stages.js'
import { subscription } from '../kernel/dispatcher.js'
import type { Security } from './security.js'
import type { ResolvedFirewall } from './options.js'
import { parseAuthorization } from './credentials.js'
import { RequestSecurity } from './request-security.js'
import { basicChallenge, bearerChallenge, unauthorized } from './entry-points.js'
import { AccessDeniedException } from '../errors/exceptions.js'
import { forget, readToken, tokenKey } from './session-token.js'

/** The request's security state (null before the firewall ran). */
export function securityOf (context: KernelContext | null): RequestSecurity | null {
  return context?.get('security') ?? null
}

/** Symfony matches firewalls and access rules on the decoded path: `/%61dmin` is `/admin`. */
export function decodedPath (context: KernelContext, request: FastifyRequest): string {
  const raw = context.uri?.path ?? request.url.split('?')[0]
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}

/**
 * The firewall listener of kernel.request (priority 8, after routing and `_locale`): finds the
 * request's firewall, authenticates it (Authorization header first, then the session of a
 * stateful firewall), then applies the first matching access rule.
 *
 * Wrong or malformed credentials answer 401 with the authenticator's challenge right here,
 * wherever the path, as Symfony's authenticators do. A missing role throws
 * AccessDeniedException, which the security exception listener turns into 401 (anonymous)
 * or 403 (authenticated).
 */
export function firewallSubscriptions (security: Security) {
  return [subscription(Stage.REQUEST, Priority.FIREWALL, 'firewall', firewall)]

  function firewall (event: RequestEvent): void | Promise<void> {
    const { request, context } = event
    const path = decodedPath(context, request)
    const matched = security.firewallFor(path)
    const state = new RequestSecurity(matched !== null && matched.security ? matched : null, security.hierarchy)
    context.set('security', state)
    request.security = state
    if (state.firewall === null) return
    const fw = state.firewall
    const header = request.headers.authorization
    const credentials = typeof header === 'string' && header !== '' ? parseAuthorization(header) : null
    const token = fw.stateless ? null : readToken(request, fw.name)
    if (credentials === null && token === null) {
      // the common anonymous case stays synchronous
      authorize(event, state, path)
      return
    }
    return authenticate(event, fw, state, credentials, token).then((answered) => {
      if (!answered) authorize(event, state, path)
    })
  }

  /** Returns true when the request was answered (401 for bad credentials). */
  async function authenticate (event: RequestEvent, fw: ResolvedFirewall, state: RequestSecurity, credentials: ReturnType<typeof parseAuthorization> | null, token: ReturnType<typeof readToken>): Promise<boolean> {
    const { request } = event
    if (credentials !== null && credentials.scheme === 'basic' && fw.httpBasic !== null) {
      const user = 'malformed' in credentials ? null : await refusedOr(state, security.attemptPasswordLogin(fw, request.ip, credentials.username, credentials.password))
      if (user === null) return fail(event, state, basicChallenge(fw.httpBasic.realm), 'malformed' in credentials ? `Malformed Basic credentials (${credentials.malformed}).` : 'Invalid credentials.')
      state.authenticate(user, 'httpBasic')
      return false
    }
    if (credentials !== null && credentials.scheme === 'bearer' && fw.bearer !== null) {
      const user = 'malformed' in credentials ? null : await refusedOr(state, security.attemptTokenLogin(fw, request.ip, credentials.token))
      if (user === null) return fail(event, state, bearerChallenge(fw.bearer.realm, true), 'malformed' in credentials ? `Malformed Bearer token (${credentials.malformed}).` : 'Invalid credentials.')
      state.authenticate(user, 'bearer')
      return false
    }
    // another scheme, or one this firewall does not use: anonymous, unless the session says otherwise
    if (token !== null) {
      const user = await security.refreshUser(token.username)
      if (user !== null) state.authenticate(user, 'session')
      else forget(request, tokenKey(fw.name))
    }
    return false
  }

  /** A login refused before its check (throttled, too many checks at once) fails kernel.request: 429/503. */
  async function refusedOr<T> (state: RequestSecurity, attempt: Promise<T>): Promise<T> {
    try {
      return await attempt
    } catch (error) {
      state.decision = 'unauthenticated'
      state.reason = (error as Error).message
      throw error
    }
  }

  function fail (event: RequestEvent, state: RequestSecurity, challenge: string, reason: string): true {
    state.decision = 'unauthenticated'
    state.reason = reason
    event.setResponse(unauthorized(challenge))
    return true
  }

  function authorize (event: RequestEvent, state: RequestSecurity, path: string): void {
    const rule = security.accessMap.match(path, event.request.method)
    state.accessRule = rule
    if (rule !== null) {
      if (state.isGranted(rule.roles)) {
        state.decision = 'granted'
      } else {
        state.decision = state.user === null ? 'unauthenticated' : 'denied'
        state.reason = `access rule "${rule.path}" requires ${rule.roles.join(' or ')}`
        throw new AccessDeniedException('Access Denied.', rule.roles)
      }
    }
  }
}
