import type { FastifyRequest } from 'fastify'
import type { SecurityUser } from './user-provider.js'

/** Granted to everyone, anonymous included (Symfony 5.4's `PUBLIC_ACCESS`). */
export const PUBLIC_ACCESS = 'PUBLIC_ACCESS'
/** Granted to any authenticated user (Symfony's `IS_AUTHENTICATED` / `IS_AUTHENTICATED_FULLY`). */
export const IS_AUTHENTICATED = 'IS_AUTHENTICATED'
const AUTHENTICATED_ATTRIBUTES = new Set([IS_AUTHENTICATED, 'IS_AUTHENTICATED_FULLY'])

/** A route's access check: a role, several roles (any of them grants), or a function. */
export type IsGrantedCheck =
  | string
  | readonly string[]
  | ((user: SecurityUser | null, request: FastifyRequest) => boolean | Promise<boolean>)

/**
 * The affirmative decision of Symfony's role voter: granted when the user's reachable roles
 * include any one of the attributes. The special attributes need no role.
 */
export function rolesGrant (reachableRoles: readonly string[] | null, attributes: readonly string[]): boolean {
  for (const attribute of attributes) {
    if (attribute === PUBLIC_ACCESS) return true
    if (reachableRoles === null) continue
    if (AUTHENTICATED_ATTRIBUTES.has(attribute) || reachableRoles.includes(attribute)) return true
  }
  return false
}

/** A readable form of a check for messages and the profiler. */
export function describeCheck (check: IsGrantedCheck): string {
  if (typeof check === 'function') return check.name === '' ? 'a function' : `function ${check.name}`
  return typeof check === 'string' ? check : check.join(' or ')
}
