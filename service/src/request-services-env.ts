import { parsePasswordHash } from 'fastify-kernel/security'
import { MIN_SECRET_LENGTH } from 'fastify-kernel/session'
import { ServiceConfigError } from './errors.js'

/** The service's session, locale and security settings (see `.env.example`). */
export interface RequestServicesEnv {
  /** null: none given; dev and test generate one per process, prod refuses to start */
  APP_SESSION_SECRET: string | null
  APP_LOCALES: string[]
  APP_DEFAULT_LOCALE: string
  /** null: none given; dev and test get the demo users, prod gets none */
  APP_USERS: Array<{ username: string, password: string, roles: string[] }> | null
  /** username → SHA-256 (hex) of the user's API token; null: demo token in dev and test */
  APP_API_TOKENS: Record<string, string> | null
  /** failed logins per user name and client within LOGIN_INTERVAL (5x per client); 0: no throttling */
  LOGIN_MAX_ATTEMPTS: number
  /** seconds of the login throttling window */
  LOGIN_INTERVAL: number
}

export const requestServicesSchema = {
  APP_SESSION_SECRET: { type: 'string' },
  APP_LOCALES: { type: 'string', default: 'en,fr' },
  APP_DEFAULT_LOCALE: { type: 'string' },
  APP_USERS: { type: 'string' },
  APP_API_TOKENS: { type: 'string' },
  LOGIN_MAX_ATTEMPTS: { type: 'integer', minimum: 0, maximum: 1000000, default: 5 },
  LOGIN_INTERVAL: { type: 'integer', minimum: 1, maximum: 86400, default: 60 }
} as const

function invalid (message: string): never {
  throw new ServiceConfigError(message)
}

const LOCALE = /^[A-Za-z]{2,3}([_-][A-Za-z0-9]{2,8}){0,3}$/
const ROLE = /^[A-Za-z0-9_]+$/
const USERNAME = /^[^\s:;]{1,128}$/

/** `name:hash:ROLE_A|ROLE_B` entries separated by `;` (scrypt hashes contain `$` and `,`). */
function parseUsers (value: string): RequestServicesEnv['APP_USERS'] {
  return value.split(';').map((entry) => entry.trim()).filter((entry) => entry !== '').map((entry, i) => {
    const [username, password, roles = '', ...rest] = entry.split(':')
    if (rest.length > 0 || username === undefined || password === undefined || !USERNAME.test(username)) {
      invalid(`APP_USERS entry ${i + 1} must be "username:scrypt-hash:ROLE_A|ROLE_B"`)
    }
    try {
      parsePasswordHash(password)
    } catch (error) {
      invalid(`APP_USERS user "${username}": password ${(error as Error).message}`)
    }
    const list = roles.split('|').filter((r) => r !== '')
    if (!list.every((r) => ROLE.test(r))) invalid(`APP_USERS user "${username}": roles must be letters, digits and _ separated by |`)
    return { username, password, roles: list }
  })
}

function parseTokens (value: string): Record<string, string> {
  const tokens: Record<string, string> = {}
  for (const entry of value.split(';').map((e) => e.trim()).filter((e) => e !== '')) {
    const [username, hash, ...rest] = entry.split(':')
    if (rest.length > 0 || hash === undefined || !USERNAME.test(username) || !/^[0-9a-f]{64}$/.test(hash)) {
      invalid('APP_API_TOKENS entries must be "username:sha256-hex-of-the-token" separated by ";"')
    }
    tokens[username] = hash
  }
  return tokens
}

/** Applies the rules: a short secret is refused everywhere, a missing one in prod. */
export function resolveRequestServicesEnv (raw: Record<string, unknown>, appEnv: 'dev' | 'prod' | 'test'): RequestServicesEnv {
  const secret = raw.APP_SESSION_SECRET as string | undefined
  if (secret === undefined || secret === '') {
    if (appEnv === 'prod') invalid(`APP_SESSION_SECRET is required with APP_ENV=prod (at least ${MIN_SECRET_LENGTH} random characters; make one with: node -e "console.log(require('node:crypto').randomBytes(32).toString('base64url'))")`)
  } else if (secret.length < MIN_SECRET_LENGTH) {
    invalid(`APP_SESSION_SECRET is too short: ${secret.length} characters, at least ${MIN_SECRET_LENGTH} are required`)
  }
  const locales = String(raw.APP_LOCALES).split(',').map((l) => l.trim()).filter((l) => l !== '')
  if (locales.length === 0 || !locales.every((l) => LOCALE.test(l))) invalid('APP_LOCALES must be a comma-separated list of locales such as "en,fr,pt_BR"')
  const fallback = (raw.APP_DEFAULT_LOCALE as string | undefined) ?? locales[0]
  if (!locales.includes(fallback)) invalid(`APP_DEFAULT_LOCALE "${fallback}" is not one of APP_LOCALES (${locales.join(', ')})`)
  return {
    APP_SESSION_SECRET: secret === undefined || secret === '' ? null : secret,
    APP_LOCALES: locales,
    APP_DEFAULT_LOCALE: fallback,
    APP_USERS: raw.APP_USERS === undefined ? null : parseUsers(raw.APP_USERS as string),
    APP_API_TOKENS: raw.APP_API_TOKENS === undefined ? null : parseTokens(raw.APP_API_TOKENS as string),
    LOGIN_MAX_ATTEMPTS: raw.LOGIN_MAX_ATTEMPTS as number,
    LOGIN_INTERVAL: raw.LOGIN_INTERVAL as number
  }
}
