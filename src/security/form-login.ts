import type { FastifyRequest } from 'fastify'
import type { Security } from './security.js'
import type { ResolvedFirewall } from './options.js'
import { MAX_USERNAME_LENGTH } from './credentials.js'
import { MAX_PASSWORD_LENGTH } from './password-hasher.js'
import { securityOf } from './firewall-listener.js'
import { sessionOf, targetPathKey, tokenKey } from './session-token.js'
import type { StoredToken } from './session-token.js'
import type { StoredUser } from './user-provider.js'
import { CSRF_SESSION_KEY } from './csrf.js'
import { redirectOrigin } from './entry-points.js'

/** A local path, never `//host` or `/\host` (which browsers read as another site). */
function isLocalPath (value: unknown): value is string {
  return typeof value === 'string' && value.startsWith('/') && !value.startsWith('//') && !value.startsWith('/\\') && !/[\r\n]/.test(value)
}

/**
 * The form login check (POST to `checkPath`). Success: the session id is regenerated (no
 * session fixation; the session's other attributes move to the new id), the user is kept in
 * it, and the answer is a redirect to the saved target path or `defaultTargetPath`. Failure:
 * a redirect back to the login form with `?error=1`, and no session is created or touched.
 * Returns the Location to redirect to (absolute only from a host `trustedHosts` vetted).
 */
export async function checkFormLogin (security: Security, firewall: ResolvedFirewall, request: FastifyRequest, hostsVetted: boolean): Promise<string> {
  const form = firewall.formLogin!
  const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<string, unknown>
  const username = body[form.usernameParameter]
  const password = body[form.passwordParameter]
  const base = redirectOrigin(request.kernel, hostsVetted)
  const valid = typeof username === 'string' && typeof password === 'string' &&
    username.length <= MAX_USERNAME_LENGTH && password.length <= MAX_PASSWORD_LENGTH
  const state = securityOf(request.kernel)
  const unauthenticated = (reason: string): void => {
    if (state === null) return
    state.decision = 'unauthenticated'
    state.reason = reason
  }
  let user: StoredUser | null = null
  try {
    if (valid) user = await security.attemptPasswordLogin(firewall, request.ip, username.trim(), password)
  } catch (error) {
    // throttled or too many checks at once: the error page answers (429 / 503)
    unauthenticated((error as Error).message)
    throw error
  }
  if (user === null) {
    unauthenticated('Invalid credentials.')
    return `${base}${form.loginPath}?error=1`
  }

  const session = sessionOf(request)!
  const target = session.get(targetPathKey(firewall.name))
  // as Symfony's session strategy, the CSRF secret is not carried over: a new one is made for the next form
  const keep = Object.keys(session).filter((key) => key !== 'cookie' && key !== targetPathKey(firewall.name) && key !== CSRF_SESSION_KEY)
  await (request.session as unknown as { regenerate: (keep: string[]) => Promise<void> }).regenerate(keep)
  sessionOf(request)!.set(tokenKey(firewall.name), { username: user.username, authenticator: 'formLogin' } satisfies StoredToken)
  state?.authenticate(user, 'formLogin')
  return base + (isLocalPath(target) ? target : form.defaultTargetPath)
}

/** Logout: the session is destroyed (its cookie cleared by the caller); returns the Location. */
export async function logout (firewall: ResolvedFirewall, request: FastifyRequest, hostsVetted: boolean): Promise<string> {
  const session = sessionOf(request) as { destroy?: () => Promise<void> } | null
  if (session !== null && typeof session.destroy === 'function') await session.destroy()
  const state = securityOf(request.kernel)
  if (state !== null) {
    state.user = null
    state.roles = []
    state.authenticator = null
  }
  return redirectOrigin(request.kernel, hostsVetted) + firewall.logout!.target
}
