import type { AccessRule } from './access-map.js'
import { AccessMap } from './access-map.js'
import { RoleHierarchy } from './role-hierarchy.js'
import type { ResolvedFirewall, SecurityOptions } from './options.js'
import type { StoredUser, UserProvider } from './user-provider.js'
import { InMemoryUserProvider } from './user-provider.js'
import { hashPassword, hashToken, MAX_PASSWORD_LENGTH, parsePasswordHash, verifyPassword } from './password-hasher.js'
import { MAX_USERNAME_LENGTH } from './credentials.js'
import { counterFactory, LoginThrottler } from './login-throttling.js'
import type { LoginReservation } from './login-throttling.js'
import { PasswordCheckGate } from './password-check-gate.js'
import type { PasswordCheckLimits } from './password-check-gate.js'
import { clientKey } from './client-key.js'
import { HttpException, TooManyRequestsHttpException, TooManyLoginAttemptsAuthenticationException } from '../errors/exceptions.js'
import type { Clock } from '../clock.js'
import { systemClock } from '../clock.js'

/**
 * The security configuration at run time: firewalls, the user provider, the role hierarchy
 * and the access map, with the credential checks the authenticators share. No Fastify here.
 */
export class Security {
  readonly provider: UserProvider
  readonly hierarchy: RoleHierarchy
  readonly accessMap: AccessMap
  readonly passwordChecks: PasswordCheckGate
  /** by firewall name; a firewall without login throttling has none */
  private readonly throttlers = new Map<string, LoginThrottler>()
  /** verified when the user does not exist, so that unknown and known users take the same time */
  private readonly dummyHash: Promise<ReturnType<typeof parsePasswordHash>>

  constructor (options: SecurityOptions, readonly firewalls: readonly ResolvedFirewall[], accessControl: readonly AccessRule[], passwordChecks: PasswordCheckLimits, clock: Clock = systemClock) {
    this.provider = options.provider ?? new InMemoryUserProvider(options.users ?? {})
    this.hierarchy = new RoleHierarchy(options.roleHierarchy ?? {})
    this.accessMap = new AccessMap(accessControl)
    this.passwordChecks = new PasswordCheckGate(passwordChecks)
    const counters = counterFactory(options.loginThrottlingStore, clock)
    for (const firewall of firewalls) {
      if (firewall.loginThrottling !== null) this.throttlers.set(firewall.name, new LoginThrottler(firewall.name, firewall.loginThrottling, counters))
    }
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

  /**
   * A login with a user name and password (HTTP Basic, form login) from the client at `ip`:
   * throttled (429 when over the firewall's limits) and gated (at most so many scrypt checks at
   * once; 503 or 429 beyond). Returns the user, or null for wrong credentials (counted).
   */
  async attemptPasswordLogin (firewall: ResolvedFirewall, ip: string | undefined, username: string, password: string): Promise<StoredUser | null> {
    const client = clientKey(ip)
    return await this.attempt(firewall, client, username, () => this.passwordChecks.run(client, () => this.checkPassword(username, password)))
  }

  /** A bearer token from the client at `ip`: throttled per client (no user name is known before the check). */
  async attemptTokenLogin (firewall: ResolvedFirewall, ip: string | undefined, token: string): Promise<StoredUser | null> {
    return await this.attempt(firewall, clientKey(ip), null, () => this.checkToken(firewall, token))
  }

  private async attempt (firewall: ResolvedFirewall, client: string, username: string | null, check: () => Promise<StoredUser | null>): Promise<StoredUser | null> {
    const throttler = this.throttlers.get(firewall.name)
    let reservation: LoginReservation | undefined
    try {
      reservation = await throttler?.reserve(client, username)
    } catch (error) {
      if (!(error instanceof TooManyLoginAttemptsAuthenticationException)) throw error
      throw new TooManyRequestsHttpException(error.retryAfter, error.message, error)
    }
    let user: StoredUser | null
    try {
      user = await check()
    } catch (error) {
      // Refused by the password-check gate (503/429): not a failed login for the user name, but
      // it counts for the client, so that a flood of guesses spends its own budget on refusals
      // and soon gets the cheap 429, freeing the gate for others. Anything else: not counted.
      if (error instanceof HttpException) await reservation?.giveBackUser()
      else await reservation?.giveBack()
      throw error
    }
    // only failures count
    if (user !== null) await reservation?.giveBack()
    return user
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
