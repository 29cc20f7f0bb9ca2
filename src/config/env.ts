import envSchema from 'env-schema'
import { KernelError } from '../errors/kernel-errors.js'
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
  LOG_LEVEL: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
  /** Redis for sessions and profiles, shared by every process of the service; null: none (embedded defaults) */
  REDIS_URL: string | null
  /** where sessions live: `redis` (default with REDIS_URL) or `memory` (default without) */
  SESSION_STORE: 'memory' | 'redis'
  /** the profiler's storage (debug only): `redis` (default with REDIS_URL), `file` (default without) or `memory` */
  PROFILER_STORAGE: 'file' | 'memory' | 'redis'
  /** folder of the profiler's file storage */
  PROFILER_DIR: string
  PROFILER_MAX_PROFILES: number
  /** seconds a profile is kept */
  PROFILER_MAX_AGE: number
  /** CIDRs allowed to open the profiler; empty: loopback and private networks */
  PROFILER_ALLOWED_NETWORKS: string[]
}

const schema = {
  type: 'object',
  properties: {
    APP_ENV: { type: 'string', enum: ['dev', 'prod', 'test'], default: 'dev' },
    APP_DEBUG: { type: 'boolean' },
    APP_FORCE_DEBUG: { type: 'boolean', default: false },
    HOST: { type: 'string', minLength: 1, default: '127.0.0.1' },
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 8000 },
    TRUST_PROXY: { type: 'string', default: 'false' },
    LOG_LEVEL: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
    ...requestServicesSchema,
    REDIS_URL: { type: 'string' },
    SESSION_STORE: { type: 'string', enum: ['memory', 'redis'] },
    PROFILER_STORAGE: { type: 'string', enum: ['file', 'memory', 'redis'] },
    PROFILER_DIR: { type: 'string', minLength: 1, default: 'var/profiler' },
    PROFILER_MAX_PROFILES: { type: 'integer', minimum: 1, maximum: 1000000, default: 2000 },
    PROFILER_MAX_AGE: { type: 'integer', minimum: 1, default: 172800 },
    PROFILER_ALLOWED_NETWORKS: { type: 'string', default: '' }
  }
}

function parseTrustProxy (value: string): boolean | number | string {
  const v = value.trim().toLowerCase()
  if (v === 'false' || v === '0' || v === '') return false
  if (v === 'true') return true
  if (/^\d+$/.test(v)) return Number(v)
  return value.trim()
}

/**
 * Validates the environment (env-schema: ajv with coercion, `.env` through dotenv) and applies
 * the service's rules. Throws a KernelError naming every bad variable.
 */
export function loadServiceEnv (data: Record<string, string | undefined> = process.env, dotenv = true): ServiceEnv {
  let raw: Record<string, unknown>
  try {
    raw = envSchema({ schema, data, dotenv }) as Record<string, unknown>
  } catch (error) {
    throw new KernelError('KERNEL_INVALID_ENV', `fastify-kernel: invalid environment: ${(error as Error).message}`, { cause: error })
  }
  const appEnv = raw.APP_ENV as ServiceEnv['APP_ENV']
  const redisUrl = typeof raw.REDIS_URL === 'string' && raw.REDIS_URL.trim() !== '' ? raw.REDIS_URL.trim() : null
  if (redisUrl !== null && !/^rediss?:\/\//.test(redisUrl)) {
    throw new KernelError('KERNEL_INVALID_ENV', 'fastify-kernel: invalid environment: REDIS_URL must be a redis:// or rediss:// URL (redis://[:password@]host:6379[/db])')
  }
  const sessionStore = (raw.SESSION_STORE as ServiceEnv['SESSION_STORE'] | undefined) ?? (redisUrl === null ? 'memory' : 'redis')
  const profilerStorage = (raw.PROFILER_STORAGE as ServiceEnv['PROFILER_STORAGE'] | undefined) ?? (redisUrl === null ? 'file' : 'redis')
  for (const [name, value] of [['SESSION_STORE', sessionStore], ['PROFILER_STORAGE', profilerStorage]]) {
    if (value === 'redis' && redisUrl === null) throw new KernelError('KERNEL_INVALID_ENV', `fastify-kernel: invalid environment: ${name}=redis needs REDIS_URL`)
  }
  const env: Omit<ServiceEnv, keyof RequestServicesEnv> = {
    APP_ENV: appEnv,
    APP_DEBUG: (raw.APP_DEBUG as boolean | undefined) ?? appEnv === 'dev',
    APP_FORCE_DEBUG: raw.APP_FORCE_DEBUG as boolean,
    HOST: raw.HOST as string,
    PORT: raw.PORT as number,
    TRUST_PROXY: parseTrustProxy(raw.TRUST_PROXY as string),
    LOG_LEVEL: raw.LOG_LEVEL as ServiceEnv['LOG_LEVEL'],
    REDIS_URL: redisUrl,
    SESSION_STORE: sessionStore,
    PROFILER_STORAGE: profilerStorage,
    PROFILER_DIR: raw.PROFILER_DIR as string,
    PROFILER_MAX_PROFILES: raw.PROFILER_MAX_PROFILES as number,
    PROFILER_MAX_AGE: raw.PROFILER_MAX_AGE as number,
    PROFILER_ALLOWED_NETWORKS: (raw.PROFILER_ALLOWED_NETWORKS as string).split(',').map((cidr) => cidr.trim()).filter((cidr) => cidr !== '')
  }
  if (env.APP_ENV === 'prod' && env.APP_DEBUG && !env.APP_FORCE_DEBUG) {
    throw new KernelError('KERNEL_INVALID_ENV', 'fastify-kernel: refusing to start with APP_DEBUG=true in APP_ENV=prod: debug mode shows stack traces, request headers and the profiler to anyone who can reach the service. Set APP_DEBUG=false, or APP_FORCE_DEBUG=true if you really mean it.')
  }
  return { ...env, ...resolveRequestServicesEnv(raw, appEnv) }
}
