import { Ajv } from 'ajv'
import type { AccessRule } from './access-map.js'
import type { InMemoryUserConfig, UserProvider } from './user-provider.js'
import { errorCodes } from '../errors/codes.js'
import { ajvProblems } from '../config/ajv-problems.js'
import { REDIS_CLIENT_OPTIONS_SCHEMA } from '../redis/commands.js'
import type { LoginThrottlingLimits, LoginThrottlingStore } from './login-throttling.js'
import type { PasswordCheckLimits } from './password-check-gate.js'
import { DEFAULT_PASSWORD_CHECK_LIMITS } from './password-check-gate.js'

/** Which authenticator answers an anonymous request to a protected path. */
export type EntryPointName = 'httpBasic' | 'bearer' | 'formLogin'

export interface FirewallOptions {
  name: string
  /** regular expression tested on the path; default `^/` (everything) */
  pattern?: string
  /** `false`: no security at all under this firewall (assets, the profiler) */
  security?: boolean
  /** no session: the user is authenticated on each request. Default: true when sessions are off */
  stateless?: boolean
  httpBasic?: boolean | { realm?: string }
  /** `tokens`: username → SHA-256 (hex) of that user's token; or `handler`: token → username */
  bearer?: { realm?: string, tokens?: Record<string, string>, handler?: (token: string) => string | null | Promise<string | null> }
  /** `csrf` (default true): the check needs a CSRF token in `csrfParameter` (`_csrf_token`) */
  formLogin?: boolean | { loginPath?: string, checkPath?: string, defaultTargetPath?: string, usernameParameter?: string, passwordParameter?: string, csrf?: boolean, csrfParameter?: string }
  /** `csrf` (default true): logging out needs a CSRF token in `csrfParameter` (`_csrf_token`) */
  logout?: boolean | { path?: string, target?: string, csrf?: boolean, csrfParameter?: string }
  entryPoint?: EntryPointName
  /**
   * failed logins (HTTP Basic, Bearer, form login) allowed per user name and client in `interval`
   * seconds (five times as many per client); default `{ maxAttempts: 5, interval: 60 }`, `false`: off
   */
  loginThrottling?: boolean | { maxAttempts?: number, interval?: number }
}

export interface SecurityOptions {
  users?: Record<string, InMemoryUserConfig>
  /** another user store; replaces `users` */
  provider?: UserProvider
  roleHierarchy?: Record<string, string[]>
  firewalls: FirewallOptions[]
  accessControl?: Array<{ path: string, roles: string | string[], methods?: string[] }>
  /** where login throttling counts attempts: this process's memory (default), or Redis */
  loginThrottlingStore?: LoginThrottlingStore
  /** bounds on concurrent password checks; default `{ concurrency: 2, queue: 8, perClient: 2 }` */
  passwordChecks?: Partial<PasswordCheckLimits>
}

export interface ResolvedFirewall {
  name: string
  pattern: RegExp
  security: boolean
  stateless: boolean
  httpBasic: { realm: string } | null
  bearer: { realm: string, tokens: Map<string, string>, handler: ((token: string) => string | null | Promise<string | null>) | null } | null
  /** `csrfParameter` null: no CSRF token required */
  formLogin: { loginPath: string, checkPath: string, defaultTargetPath: string, usernameParameter: string, passwordParameter: string, csrfParameter: string | null } | null
  logout: { path: string, target: string, csrfParameter: string | null } | null
  entryPoint: EntryPointName | null
  loginThrottling: LoginThrottlingLimits | null
}

/** Symfony's `csrf_parameter` default, for form login and logout alike. */
export const DEFAULT_CSRF_PARAMETER = '_csrf_token'
export const DEFAULT_LOGIN_THROTTLING: LoginThrottlingLimits = { maxAttempts: 5, interval: 60 }

const REALM = { type: 'string', minLength: 1, maxLength: 200, pattern: '^[^"\\\\\\u0000-\\u001f\\u007f]*$' }
const PATH = { type: 'string', pattern: '^/' }
const ROLE = { type: 'string', minLength: 1, maxLength: 200 }
const PARAMETER = { type: 'string', minLength: 1, maxLength: 100 }

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['firewalls'],
  properties: {
    users: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['password'],
        properties: { password: { type: 'string' }, roles: { type: 'array', items: ROLE } }
      }
    },
    provider: { type: 'object' },
    roleHierarchy: { type: 'object', additionalProperties: { type: 'array', items: ROLE } },
    firewalls: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        properties: {
          name: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' },
          pattern: { type: 'string', minLength: 1 },
          security: { type: 'boolean' },
          stateless: { type: 'boolean' },
          httpBasic: { anyOf: [{ type: 'boolean' }, { type: 'object', additionalProperties: false, properties: { realm: REALM } }] },
          bearer: {
            type: 'object',
            additionalProperties: false,
            properties: {
              realm: REALM,
              tokens: { type: 'object', additionalProperties: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
              handler: {}
            }
          },
          formLogin: {
            anyOf: [{ type: 'boolean' }, {
              type: 'object',
              additionalProperties: false,
              properties: { loginPath: PATH, checkPath: PATH, defaultTargetPath: PATH, usernameParameter: PARAMETER, passwordParameter: PARAMETER, csrf: { type: 'boolean' }, csrfParameter: PARAMETER }
            }]
          },
          logout: { anyOf: [{ type: 'boolean' }, { type: 'object', additionalProperties: false, properties: { path: PATH, target: PATH, csrf: { type: 'boolean' }, csrfParameter: PARAMETER } }] },
          entryPoint: { enum: ['httpBasic', 'bearer', 'formLogin'] },
          loginThrottling: {
            anyOf: [{ type: 'boolean' }, {
              type: 'object',
              additionalProperties: false,
              properties: { maxAttempts: { type: 'integer', minimum: 1, maximum: 1_000_000 }, interval: { type: 'integer', minimum: 1, maximum: 86_400 } }
            }]
          }
        }
      }
    },
    accessControl: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['path', 'roles'],
        properties: {
          path: { type: 'string', minLength: 1 },
          roles: { anyOf: [ROLE, { type: 'array', items: ROLE, minItems: 1 }] },
          methods: { type: 'array', items: { type: 'string', pattern: '^[A-Za-z]+$' } }
        }
      }
    },
    loginThrottlingStore: {
      type: 'object',
      additionalProperties: false,
      required: ['redis'],
      properties: {
        redis: REDIS_CLIENT_OPTIONS_SCHEMA
      }
    },
    passwordChecks: {
      type: 'object',
      additionalProperties: false,
      properties: {
        concurrency: { type: 'integer', minimum: 1, maximum: 1024 },
        queue: { type: 'integer', minimum: 0, maximum: 100_000 },
        perClient: { type: 'integer', minimum: 1, maximum: 1024 }
      }
    }
  }
} as const

const validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(schema)

function fail (problems: string[]): never {
  throw new errorCodes.KERNEL_INVALID_OPTIONS(`invalid "security" options: ${problems.join('; ')}.`)
}

function compile (pattern: string, where: string, problems: string[]): RegExp {
  try {
    return new RegExp(pattern)
  } catch {
    problems.push(`option "${where}" is not a valid regular expression`)
    return /$^/
  }
}

/** The `security` option validated: as given, and its firewalls, access rules and limits resolved. */
export interface ResolvedSecurityOptions {
  options: SecurityOptions
  firewalls: ResolvedFirewall[]
  accessControl: AccessRule[]
  passwordChecks: PasswordCheckLimits
}

/**
 * Validates the `security` option; every problem is named at once. `sessionEnabled` decides the
 * default of `stateless` and whether form login is possible.
 */
export function resolveSecurityOptions (given: unknown, sessionEnabled: boolean): ResolvedSecurityOptions {
  if (!validate(given)) fail(ajvProblems(validate.errors ?? [], 'security'))
  const options = given as SecurityOptions
  const problems: string[] = []
  if (options.provider !== undefined && typeof options.provider.loadUser !== 'function') problems.push('option "security.provider" must have a loadUser(username) function')
  if (options.provider !== undefined && options.users !== undefined) problems.push('options "security.users" and "security.provider" exclude each other')

  const names = new Set<string>()
  const firewalls = options.firewalls.map((f, i): ResolvedFirewall => {
    const at = `security.firewalls[${i}]`
    if (names.has(f.name)) problems.push(`option "${at}.name": firewall "${f.name}" is declared twice`)
    names.add(f.name)
    const stateless = f.stateless ?? !sessionEnabled
    const realm = (given: { realm?: string } | boolean | undefined): string =>
      typeof given === 'object' && given.realm !== undefined ? given.realm : 'Secured Area'
    const formLogin = f.formLogin === undefined || f.formLogin === false
      ? null
      : (() => {
          const o = f.formLogin === true ? {} : f.formLogin
          const loginPath = o.loginPath ?? '/login'
          return {
            loginPath,
            checkPath: o.checkPath ?? loginPath,
            defaultTargetPath: o.defaultTargetPath ?? '/',
            usernameParameter: o.usernameParameter ?? '_username',
            passwordParameter: o.passwordParameter ?? '_password',
            csrfParameter: o.csrf === false ? null : o.csrfParameter ?? DEFAULT_CSRF_PARAMETER
          }
        })()
    if (formLogin !== null && stateless) {
      problems.push(`option "${at}.formLogin" needs a session: ${sessionEnabled ? 'the firewall is stateless' : 'configure the "session" option'}`)
    }
    if (f.logout !== undefined && f.logout !== false && stateless) problems.push(`option "${at}.logout" needs a stateful firewall with a session`)
    if (f.bearer?.handler !== undefined && typeof f.bearer.handler !== 'function') problems.push(`option "${at}.bearer.handler" must be a function`)
    if (f.bearer !== undefined && f.bearer.handler === undefined && f.bearer.tokens === undefined) problems.push(`option "${at}.bearer" needs "tokens" or "handler"`)
    const bearer = f.bearer === undefined
      ? null
      : {
          realm: realm(f.bearer),
          // looked up by the token's hash: the configuration never holds a usable token
          tokens: new Map(Object.entries(f.bearer.tokens ?? {}).map(([username, hash]) => [hash, username])),
          handler: typeof f.bearer.handler === 'function' ? f.bearer.handler : null
        }
    const httpBasic = f.httpBasic === undefined || f.httpBasic === false ? null : { realm: realm(f.httpBasic) }
    const available: EntryPointName[] = []
    if (httpBasic !== null) available.push('httpBasic')
    if (bearer !== null) available.push('bearer')
    if (formLogin !== null) available.push('formLogin')
    if (f.entryPoint !== undefined && !available.includes(f.entryPoint)) problems.push(`option "${at}.entryPoint": "${f.entryPoint}" is not configured on this firewall`)
    const logoutOptions = f.logout === true ? {} : f.logout
    const logout = logoutOptions === undefined || logoutOptions === false
      ? null
      : {
          path: logoutOptions.path ?? '/logout',
          target: logoutOptions.target ?? '/',
          csrfParameter: logoutOptions.csrf === false ? null : logoutOptions.csrfParameter ?? DEFAULT_CSRF_PARAMETER
        }
    const throttling = f.loginThrottling === true || f.loginThrottling === undefined ? {} : f.loginThrottling
    return {
      name: f.name,
      pattern: compile(f.pattern ?? '^/', `${at}.pattern`, problems),
      security: f.security ?? true,
      stateless,
      httpBasic,
      bearer,
      formLogin,
      logout,
      entryPoint: f.entryPoint ?? available[0] ?? null,
      // nothing to throttle on a firewall without an authenticator
      loginThrottling: throttling === false || available.length === 0
        ? null
        : { maxAttempts: throttling.maxAttempts ?? DEFAULT_LOGIN_THROTTLING.maxAttempts, interval: throttling.interval ?? DEFAULT_LOGIN_THROTTLING.interval }
    }
  })

  const accessControl = (options.accessControl ?? []).map((rule, i): AccessRule => {
    compile(rule.path, `security.accessControl[${i}].path`, problems)
    return {
      path: rule.path,
      roles: typeof rule.roles === 'string' ? [rule.roles] : [...rule.roles],
      ...(rule.methods === undefined ? {} : { methods: rule.methods.map((m) => m.toUpperCase()) })
    }
  })
  const passwordChecks = { ...DEFAULT_PASSWORD_CHECK_LIMITS, ...options.passwordChecks }
  if (problems.length > 0) fail(problems)
  return { options, firewalls, accessControl, passwordChecks }
}
