import { createHash } from 'node:crypto'
import type { AccessRule } from './access-map.js'
import { AccessMap } from './access-map.js'
import { RoleHierarchy } from './role-hierarchy.js'
import type { ResolvedFirewall, SecurityOptions } from './options.js'
import type { StoredUser, UserProvider } from './user-provider.js'
import { InMemoryUserProvider } from './user-provider.js'
import { hashPassword, MAX_PASSWORD_LENGTH, parsePasswordHash, verifyPassword } from './password-hasher.js'
import { MAX_USERNAME_LENGTH } from './credentials.js'

/** SHA-256 (hex) of a bearer token: what the `bearer.tokens` option holds. */
export function hashToken (token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

/**
 * The security configuration at run time: firewalls, the user provider, the role hierarchy
 * and the access map, with the credential checks the authenticators share. No Fastify here.
 */
export class Security {
  readonly provider: UserProvider
  readonly hierarchy: RoleHierarchy
  readonly accessMap: AccessMap
  /** verified when the user does not exist, so that unknown and known users take the same time */
  private readonly dummyHash: Promise<ReturnType<typeof parsePasswordHash>>

  constructor (options: SecurityOptions, readonly firewalls: readonly ResolvedFirewall[], accessControl: readonly AccessRule[]) {
    this.provider = options.provider ?? new InMemoryUserProvider(options.users ?? {})
    this.hierarchy = new RoleHierarchy(options.roleHierarchy ?? {})
    this.accessMap = new AccessMap(accessControl)
    const sample = Object.values(options.users ?? {})[0]?.password
    // same parameters as the configured users, so that the dummy costs what a real check costs
    this.dummyHash = (sample === undefined ? hashPassword('dummy password') : Promise.resolve(sample)).then(parsePasswordHash)
    this.dummyHash.catch(() => undefined)
  }

  /** The first firewall whose pattern matches the (decoded) path, as Symfony's FirewallMap. */
  firewallFor (path: string): ResolvedFirewall | null {
    for (const firewall of this.firewalls) {
      if (firewall.pattern.test(path)) return firewall
    }
    return null
  }

  /** The user whose password this is, or null; the same work whether the user exists or not. */
  async checkPassword (username: string, password: string): Promise<StoredUser | null> {
    if (username === '' || username.length > MAX_USERNAME_LENGTH || password.length > MAX_PASSWORD_LENGTH) return null
    const user = await this.provider.loadUser(username)
    if (user === null) {
      await verifyPassword(password, await this.dummyHash)
      return null
    }
    return (await verifyPassword(password, user.password)) ? user : null
  }

  /** The user a bearer token stands for, or null. */
  async checkToken (firewall: ResolvedFirewall, token: string): Promise<StoredUser | null> {
    const bearer = firewall.bearer
    if (bearer === null) return null
    const username = bearer.handler !== null ? await bearer.handler(token) : bearer.tokens.get(hashToken(token)) ?? null
    return typeof username === 'string' && username !== '' ? await this.provider.loadUser(username) : null
  }

  /** Reloads a user kept in the session: a deleted user is logged out, changed roles apply. */
  async refreshUser (username: string): Promise<StoredUser | null> {
    return await this.provider.loadUser(username)
  }
}
