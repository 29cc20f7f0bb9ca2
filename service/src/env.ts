import envSchema from 'env-schema'
import { ServiceConfigError } from './errors.js'
import { booleanFromEnv } from './env-flag.js'
import type { RequestServicesEnv } from './request-services-env.js'
import { requestServicesSchema, resolveRequestServicesEnv } from './request-services-env.js'

/** The service's settings, read from the environment and `.env`. */
export interface ServiceEnv extends RequestServicesEnv {
  APP_ENV: 'dev' | 'prod' | 'test'
  /** detailed error pages and the profiler; default: on in dev, off otherwise */
  APP_DEBUG: boolean
  /** allows APP_DEBUG with APP_ENV=prod, which is refused otherwise */
  APP_FORCE_DEBUG: boolean
  HOST: string
  PORT: number
  /** Fastify's trustProxy: false, true, a hop count or a list of addresses/CIDRs */
  TRUST_PROXY: boolean | number | string
  /**
   * Symfony's TRUSTED_HOSTS: one regular expression the request's host must match (any other
   * gets 400 Untrusted Host), the kernel's `trustedHosts`; empty: every host is accepted
   */
  APP_TRUSTED_HOSTS: string[]
  LOG_LEVEL: typeof LOG_LEVELS[number]
  /** debug pages: the kernel's `fileLinkFormat` ("open in editor" links): `vscode`, `phpstorm`, … or a format with %f and %l */
  APP_IDE: string | null
  /** Redis for sessions and profiles, shared by every process of the service; null: none (embedded defaults) */
  REDIS_URL: string | null
  /** a MySQL or MariaDB server the demo page asks (`mysql://user:password@host:3306/db`); null: none */
  DATABASE_URL: string | null
  /** where sessions live: `redis` (default with REDIS_URL) or `memory` (default without) */
  SESSION_STORE: 'memory' | 'redis'
  /** the profiler's storage (debug only): `redis` (default with REDIS_URL), `file` (default without) or `memory` */
  PROFILER_STORAGE: 'file' | 'memory' | 'redis'
  /** folder of the profiler's file storage; null: the kernel's default, var/profiler under the app's root */
  PROFILER_DIR: string | null
  PROFILER_MAX_PROFILES: number
  /** seconds a profile is kept */
  PROFILER_MAX_AGE: number
  /** CIDRs allowed to open the profiler; empty: loopback and private networks */
  PROFILER_ALLOWED_NETWORKS: string[]
  /** host names the profiler answers for besides the local ones (localhost, *.test, private addresses) */
  PROFILER_ALLOWED_HOSTS: string[]
  /** the profiler's `capture` option: `all`, `errors`, `on-demand`, `sample:<percent>`, `slow:<ms>` */
  PROFILER_CAPTURE: 'all' | 'errors' | 'on-demand' | { sample: number } | { slowerThan: number }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

const schema = {
  type: 'object',
  properties: {
    APP_ENV: { type: 'string', enum: ['dev', 'prod', 'test'], default: 'dev' },
    // strings: the spellings are read by booleanFromEnv (env-flag.ts)
    APP_DEBUG: { type: 'string' },
    APP_FORCE_DEBUG: { type: 'string' },
    HOST: { type: 'string', minLength: 1, default: '127.0.0.1' },
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 8000 },
    TRUST_PROXY: { type: 'string', default: 'false' },
    APP_TRUSTED_HOSTS: { type: 'string', default: '' },
    LOG_LEVEL: { type: 'string', enum: LOG_LEVELS, default: 'info' },
    APP_IDE: { type: 'string', default: '' },
    ...requestServicesSchema,
    REDIS_URL: { type: 'string' },
    DATABASE_URL: { type: 'string' },
    SESSION_STORE: { type: 'string', enum: ['memory', 'redis'] },
    PROFILER_STORAGE: { type: 'string', enum: ['file', 'memory', 'redis'] },
    PROFILER_DIR: { type: 'string', default: '' },
    PROFILER_MAX_PROFILES: { type: 'integer', minimum: 1, maximum: 1000000, default: 2000 },
    PROFILER_MAX_AGE: { type: 'integer', minimum: 1, default: 172800 },
    PROFILER_ALLOWED_NETWORKS: { type: 'string', default: '' },
    PROFILER_ALLOWED_HOSTS: { type: 'string', default: '' },
    PROFILER_CAPTURE: { type: 'string', default: 'all' }
  }
}

/**
 * `TRUST_PROXY`: `false`/`true` (any boolean spelling), a hop count (`1`: the nearest proxy is
 * trusted, whoever it is, as Express counts hops; Fastify itself refuses a bare number), or
 * addresses and CIDRs.
 */
export function parseTrustProxy (value: string): ServiceEnv['TRUST_PROXY'] {
  const v = value.trim()
  if (/^\d+$/.test(v)) {
    const hops = Number(v)
    return hops === 0 ? false : hops
  }
  try {
    return booleanFromEnv(v, 'TRUST_PROXY')
  } catch {
    return v
  }
}

/**
 * `APP_TRUSTED_HOSTS`: one regular expression, as Symfony's `TRUSTED_HOSTS`
 * (`^(localhost|example\.com)$`): a list would split a pattern such as `\d{1,3}` at its comma.
 */
export function parseTrustedHosts (value: string): string[] {
  const pattern = value.trim()
  if (pattern === '') return []
  try {
    RegExp(pattern, 'i')
  } catch (error) {
    throw new ServiceConfigError(`APP_TRUSTED_HOSTS is not a regular expression: "${pattern}": ${(error as Error).message}`)
  }
  return [pattern]
}

/** ajv's errors, each naming its variable and, for a choice, the values it accepts. */
function envProblems (error: unknown): string {
  const errors = (error as { errors?: Array<{ instancePath: string, keyword: string, message?: string, params: Record<string, unknown> }> }).errors
  if (errors === undefined) return (error as Error).message
  return errors.map((e) => {
    const name = e.instancePath.replace(/^\//, '')
    if (e.keyword === 'enum') return `${name} must be one of ${(e.params.allowedValues as string[]).join(', ')}`
    return `${name} ${e.message ?? 'is invalid'}`
  }).join('; ')
}

/** PROFILER_CAPTURE: `all`, `errors`, `on-demand`, `sample:<percent>`, `slow:<ms>`. */
function parseCapture (text: string): ServiceEnv['PROFILER_CAPTURE'] {
  const value = text.trim().toLowerCase()
  if (value === 'all' || value === 'errors' || value === 'on-demand') return value
  const match = /^(sample|slow):(\d+(?:\.\d+)?)$/.exec(value)
  if (match === null) throw new ServiceConfigError(`PROFILER_CAPTURE must be all, errors, on-demand, sample:<percent> or slow:<ms>, got "${text}"`)
  return match[1] === 'sample' ? { sample: Number(match[2]) } : { slowerThan: Number(match[2]) }
}

/** A comma-separated list, without its empty entries. */
function list (value: unknown): string[] {
  return String(value).split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')
}

function flag (raw: Record<string, unknown>, name: string, fallback: boolean): boolean {
  return booleanFromEnv(raw[name] as string | undefined, name, fallback)
}

/**
 * Validates the environment (env-schema: ajv with coercion, `.env` through dotenv) and applies
 * the service's rules. Throws a ServiceConfigError naming every bad variable.
 */
export function loadServiceEnv (data: Record<string, string | undefined> = process.env, dotenv = true): ServiceEnv {
  let raw: Record<string, unknown>
  try {
    raw = envSchema({ schema, data, dotenv }) as Record<string, unknown>
  } catch (error) {
    throw new ServiceConfigError(envProblems(error), { cause: error })
  }
  const appEnv = raw.APP_ENV as ServiceEnv['APP_ENV']
  const redisUrl = typeof raw.REDIS_URL === 'string' && raw.REDIS_URL.trim() !== '' ? raw.REDIS_URL.trim() : null
  if (redisUrl !== null && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ServiceConfigError('REDIS_URL must be a redis:// or rediss:// URL (redis://[:password@]host:6379[/db])')
  }
  const databaseUrl = typeof raw.DATABASE_URL === 'string' && raw.DATABASE_URL.trim() !== '' ? raw.DATABASE_URL.trim() : null
  if (databaseUrl !== null && !/^(mysql|mariadb):\/\/[^/]/.test(databaseUrl)) {
    throw new ServiceConfigError('DATABASE_URL must be a mysql:// or mariadb:// URL (mysql://user:password@host:3306/database)')
  }
  const sessionStore = (raw.SESSION_STORE as ServiceEnv['SESSION_STORE'] | undefined) ?? (redisUrl === null ? 'memory' : 'redis')
  const profilerStorage = (raw.PROFILER_STORAGE as ServiceEnv['PROFILER_STORAGE'] | undefined) ?? (redisUrl === null ? 'file' : 'redis')
  for (const [name, value] of [['SESSION_STORE', sessionStore], ['PROFILER_STORAGE', profilerStorage]]) {
    if (value === 'redis' && redisUrl === null) throw new ServiceConfigError(`${name}=redis needs REDIS_URL`)
  }
  const env: Omit<ServiceEnv, keyof RequestServicesEnv> = {
    APP_ENV: appEnv,
    APP_DEBUG: flag(raw, 'APP_DEBUG', appEnv === 'dev'),
    APP_FORCE_DEBUG: flag(raw, 'APP_FORCE_DEBUG', false),
    HOST: raw.HOST as string,
    PORT: raw.PORT as number,
    TRUST_PROXY: parseTrustProxy(raw.TRUST_PROXY as string),
    APP_TRUSTED_HOSTS: parseTrustedHosts(raw.APP_TRUSTED_HOSTS as string),
    LOG_LEVEL: raw.LOG_LEVEL as ServiceEnv['LOG_LEVEL'],
    APP_IDE: (raw.APP_IDE as string).trim() === '' ? null : (raw.APP_IDE as string).trim(),
    REDIS_URL: redisUrl,
    DATABASE_URL: databaseUrl,
    SESSION_STORE: sessionStore,
    PROFILER_STORAGE: profilerStorage,
    PROFILER_DIR: (raw.PROFILER_DIR as string).trim() === '' ? null : (raw.PROFILER_DIR as string).trim(),
    PROFILER_MAX_PROFILES: raw.PROFILER_MAX_PROFILES as number,
    PROFILER_MAX_AGE: raw.PROFILER_MAX_AGE as number,
    PROFILER_ALLOWED_NETWORKS: list(raw.PROFILER_ALLOWED_NETWORKS),
    PROFILER_ALLOWED_HOSTS: list(raw.PROFILER_ALLOWED_HOSTS),
    PROFILER_CAPTURE: parseCapture(raw.PROFILER_CAPTURE as string)
  }
  if (env.APP_ENV === 'prod' && env.APP_DEBUG && !env.APP_FORCE_DEBUG) {
    throw new ServiceConfigError('refusing to start with APP_DEBUG on in APP_ENV=prod: debug mode shows stack traces, request headers and the profiler to anyone who can reach the service. Set APP_DEBUG=0, or APP_FORCE_DEBUG=1 if you really mean it.')
  }
  return { ...env, ...resolveRequestServicesEnv(raw, appEnv) }
}
