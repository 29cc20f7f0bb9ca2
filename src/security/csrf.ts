import type { FastifyRequest } from 'fastify'
import { kCsrfToken, routeMarks } from '../symbols.js'
import { AccessDeniedHttpException, InvalidCsrfTokenException } from '../errors/exceptions.js'
import { DEFAULT_CSRF_PARAMETER } from './options.js'

/** Where @fastify/csrf-protection keeps the session's CSRF secret. */
export const CSRF_SESSION_KEY = '_csrf'

/** A route's CSRF token source: its body field, and whether a query parameter also counts (a logout link). */
export interface CsrfTokenSource { parameter: string, query: boolean }

/** The headers JavaScript clients send the token in (@fastify/csrf-protection's own list). */
const TOKEN_HEADERS = ['csrf-token', 'xsrf-token', 'x-csrf-token', 'x-xsrf-token'] as const

function stringField (bag: unknown, name: string): string | undefined {
  const value = typeof bag === 'object' && bag !== null ? (bag as Record<string, unknown>)[name] : undefined
  return typeof value === 'string' ? value : undefined
}

/**
 * The token a request carries, for @fastify/csrf-protection's `getToken`: the route's
 * parameter (`_csrf_token` unless configured; the app's own routes use that default) in the
 * body, in the query where the route allows it (the logout link), or one of the token headers.
 */
export function csrfTokenOf (request: FastifyRequest): string | undefined {
  const source = routeMarks(request.routeOptions.config)[kCsrfToken]
  const parameter = source?.parameter ?? DEFAULT_CSRF_PARAMETER
  const token = stringField(request.body, parameter) ?? (source?.query === true ? stringField(request.query, parameter) : undefined)
  if (token !== undefined) return token
  for (const name of TOKEN_HEADERS) {
    const value = request.headers[name]
    if (typeof value === 'string') return value
  }
  return undefined
}

/** @fastify/csrf-protection's refusals: a missing secret (no session) or a wrong token. */
export function isCsrfRefusal (error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === 'FST_CSRF_INVALID_TOKEN' || code === 'FST_CSRF_MISSING_SECRET'
}

/**
 * What a refused token becomes: 403 `Invalid CSRF token.` for the error controller, as Symfony's
 * security exception listener answers a logout with a bad token (AccessDeniedHttpException).
 */
export function invalidCsrfToken (refusal: unknown): AccessDeniedHttpException {
  return new AccessDeniedHttpException('Invalid CSRF token.', new InvalidCsrfTokenException('Invalid CSRF token.', refusal))
}
