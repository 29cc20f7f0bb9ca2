import { parsePasswordHash } from './password-hasher.js'
import { errorCodes } from '../errors/codes.js'

/** What the application sees of an authenticated user: never the password hash. */
export interface SecurityUser {
  readonly username: string
  /** the user's own roles, as configured (the hierarchy adds the roles they include) */
  readonly roles: readonly string[]
}

/** A user as a provider stores it, with its password hash (scrypt, see password-hasher). */
export interface StoredUser extends SecurityUser {
  readonly password: string
}

/** Where the firewall looks users up; the in-memory provider is the built-in one. */
export interface UserProvider {
  loadUser: (username: string) => StoredUser | null | Promise<StoredUser | null>
}

export interface InMemoryUserConfig {
  password: string
  roles?: string[]
}

/** Users declared in the options; every hash is checked at start-up, so a typo fails early. */
export class InMemoryUserProvider implements UserProvider {
  private readonly users = new Map<string, StoredUser>()

  constructor (users: Readonly<Record<string, InMemoryUserConfig>>) {
    for (const [username, user] of Object.entries(users)) {
      try {
        parsePasswordHash(user.password)
      } catch (error) {
        throw new errorCodes.KERNEL_INVALID_PASSWORD_HASH(`user "${username}": password ${(error as Error).message}`, { cause: error })
      }
      this.users.set(username, Object.freeze({ username, password: user.password, roles: Object.freeze([...(user.roles ?? [])]) }))
    }
  }

  loadUser (username: string): StoredUser | null {
    return this.users.get(username) ?? null
  }
}
