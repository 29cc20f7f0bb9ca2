import type { FastifyRequest } from 'fastify'
import type {} from '@fastify/session'

/**
 * What a stateful firewall keeps in the session: who logged in and how. Never a password,
 * never roles (they are reloaded from the provider on each request).
 */
export interface StoredToken {
  username: string
  authenticator: 'formLogin'
}

export const tokenKey = (firewall: string): string => `_security_${firewall}`
export const targetPathKey = (firewall: string): string => `_security.${firewall}.target_path`

/** Whether a stored session holds a logged-in user (of any firewall). */
export function holdsUser (session: Record<string, unknown>): boolean {
  for (const key of Object.keys(session)) if (key.startsWith('_security_')) return true
  return false
}

type SessionLike = { get: (key: string) => unknown, set: (key: string, value: unknown) => void, sessionId?: string }

/** The request's session, when sessions are on and this request has one. */
export function sessionOf (request: FastifyRequest): SessionLike | null {
  const session = (request as { session?: unknown }).session as SessionLike | null | undefined
  return session !== null && session !== undefined && typeof session.get === 'function' ? session : null
}

export function readToken (request: FastifyRequest, firewall: string): StoredToken | null {
  const value = sessionOf(request)?.get(tokenKey(firewall)) as Partial<StoredToken> | undefined
  return value !== undefined && value !== null && typeof value.username === 'string' ? { username: value.username, authenticator: 'formLogin' } : null
}

/** Removes a key without creating a session that does not exist yet. */
export function forget (request: FastifyRequest, key: string): void {
  const session = sessionOf(request)
  if (session !== null && session.get(key) !== undefined) session.set(key, undefined)
}
