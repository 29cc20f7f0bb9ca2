import type { AccessRule } from './access-map.js'
import type { ResolvedFirewall, EntryPointName } from './options.js'
import type { RoleHierarchy } from './role-hierarchy.js'
import type { SecurityUser } from './user-provider.js'
import { rolesGrant } from './access-decision.js'
import { AccessDeniedException } from '../errors/exceptions.js'

export type AuthenticatorName = EntryPointName | 'session'

/** What the profiler's security panel shows. */
export interface SecurityCollected {
  firewall: string | null
  stateless: boolean
  authenticated: boolean
  user: string | null
  roles: string[]
  authenticator: string | null
  accessRule: { path: string, roles: string[] } | null
  decision: 'granted' | 'denied' | 'unauthenticated' | 'none'
  reason?: string
}

/**
 * The security state of one request, as `request.security`: its firewall, its user (null when
 * anonymous) and `isGranted()`. The firewall listener fills it; access checks read it.
 */
export class RequestSecurity {
  user: SecurityUser | null = null
  /** the user's roles and every role they include */
  roles: string[] = []
  authenticator: AuthenticatorName | null = null
  accessRule: AccessRule | null = null
  decision: SecurityCollected['decision'] = 'none'
  reason: string | undefined

  constructor (readonly firewall: ResolvedFirewall | null, private readonly hierarchy: RoleHierarchy | null) {}

  authenticate (user: SecurityUser, authenticator: AuthenticatorName): void {
    this.user = { username: user.username, roles: [...user.roles] }
    this.roles = this.hierarchy === null ? [...user.roles] : this.hierarchy.reachableRoles(user.roles)
    this.authenticator = authenticator
  }

  /** Any one of the attributes grants (a role, or PUBLIC_ACCESS / IS_AUTHENTICATED). */
  isGranted (attributes: string | readonly string[]): boolean {
    return rolesGrant(this.user === null ? null : this.roles, typeof attributes === 'string' ? [attributes] : attributes)
  }

  /**
   * Symfony's `denyAccessUnlessGranted()` for controllers: throws AccessDeniedException, which
   * becomes the firewall's 401 (anonymous) or a 403 (authenticated).
   */
  denyAccessUnlessGranted (attributes: string | readonly string[]): void {
    if (this.isGranted(attributes)) return
    this.decision = this.user === null ? 'unauthenticated' : 'denied'
    const list = typeof attributes === 'string' ? [attributes] : [...attributes]
    this.reason = `the controller requires ${list.join(' or ')}`
    throw new AccessDeniedException('Access Denied.', list)
  }

  /** Plain data for the profiler: names and roles, never a credential. */
  collect (): SecurityCollected {
    return {
      firewall: this.firewall?.name ?? null,
      stateless: this.firewall?.stateless ?? true,
      authenticated: this.user !== null,
      user: this.user?.username ?? null,
      roles: [...this.roles],
      authenticator: this.authenticator,
      accessRule: this.accessRule === null ? null : { path: this.accessRule.path, roles: [...this.accessRule.roles] },
      decision: this.decision,
      ...(this.reason === undefined ? {} : { reason: this.reason })
    }
  }
}

declare module '../kernel/context.js' {
  interface KernelState {
    /** the request's firewall, user and decision, once the firewall listener ran */
    security: RequestSecurity
  }
}

/** The anonymous state of requests outside every firewall. */
export function anonymous (): RequestSecurity {
  return new RequestSecurity(null, null)
}
