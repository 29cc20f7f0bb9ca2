import { fastifyCookie } from '@fastify/cookie'
import { TOKEN_PATTERN } from './token.js'

/**
 * Symfony's `sf_redirect`: a redirect's profile is named to the page the browser goes to next,
 * whose toolbar shows "Redirect from POST @route (token)" (the form POST → 303 → GET pattern:
 * what the POST did, the jobs it queued, is one click away). The redirect's response sets this
 * cookie; the next profiled request reads it into its profile and clears it.
 */
export const REDIRECT_COOKIE = 'kernel_redirect'

/** The redirect a request came from, as its profile keeps it. */
export interface RedirectOrigin {
  token: string
  method: string
  /** the route's name, when it had one */
  route: string | null
  statusCode: number
}

/** The redirects a browser follows by itself (Symfony also counts a 201, which browsers do not follow). */
const FOLLOWED = new Set([301, 302, 303, 307, 308])
const METHOD = /^[A-Z]{1,16}$/
const MAX_ROUTE = 200

export function isFollowedRedirect (statusCode: number, location: unknown): boolean {
  return FOLLOWED.has(statusCode) && location !== undefined && location !== ''
}

/** The `Set-Cookie` a redirect's response carries (a session cookie, as Symfony's: `HttpOnly`, `SameSite=Lax`, `Secure` over HTTPS). */
export function redirectCookie (origin: RedirectOrigin, secure: boolean): string {
  return fastifyCookie.serialize(REDIRECT_COOKIE, JSON.stringify(origin), { path: '/', httpOnly: true, sameSite: 'lax', secure })
}

/** The `Set-Cookie` that removes it once read. */
export function clearRedirectCookie (secure: boolean): string {
  return fastifyCookie.serialize(REDIRECT_COOKIE, '', { path: '/', httpOnly: true, sameSite: 'lax', secure, maxAge: 0 })
}

/**
 * The redirect a request's cookie names; undefined without one, or for a value that is not one
 * (the client sends it: it must be a token, a method, a short route name and a 3xx, or nothing).
 */
export function redirectOrigin (cookieHeader: unknown): RedirectOrigin | undefined {
  if (typeof cookieHeader !== 'string' || !cookieHeader.includes(REDIRECT_COOKIE)) return undefined
  let value: unknown
  try {
    const raw = fastifyCookie.parse(cookieHeader)[REDIRECT_COOKIE]
    if (raw === undefined || raw === '') return undefined
    value = JSON.parse(raw)
  } catch {
    return undefined
  }
  const { token, method, route, statusCode } = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>
  if (typeof token !== 'string' || !TOKEN_PATTERN.test(token)) return undefined
  if (typeof method !== 'string' || !METHOD.test(method)) return undefined
  if (typeof statusCode !== 'number' || !FOLLOWED.has(statusCode)) return undefined
  if (route !== null && (typeof route !== 'string' || route.length > MAX_ROUTE)) return undefined
  return { token, method, route, statusCode }
}
