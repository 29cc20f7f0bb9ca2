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
  /** debug pages: the kernel's `fileLinkFormat` ("open in editor" links): `vscode`, `phpstorm`, … or a format with %f and %l */
  APP_IDE: string | null
  /** the profiler's storage (debug only): `file` (default) or `memory` */
  PROFILER_STORAGE: 'file' | 'memory'
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
    APP_IDE: { type: 'string', default: '' },
    ...requestServicesSchema,
    PROFILER_STORAGE: { type: 'string', enum: ['file', 'memory'], default: 'file' },
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
  const env: Omit<ServiceEnv, keyof RequestServicesEnv> = {
    APP_ENV: appEnv,
    APP_DEBUG: (raw.APP_DEBUG as boolean | undefined) ?? appEnv === 'dev',
    APP_FORCE_DEBUG: raw.APP_FORCE_DEBUG as boolean,
    HOST: raw.HOST as string,
    PORT: raw.PORT as number,
    TRUST_PROXY: parseTrustProxy(raw.TRUST_PROXY as string),
    LOG_LEVEL: raw.LOG_LEVEL as ServiceEnv['LOG_LEVEL'],
    APP_IDE: (raw.APP_IDE as string).trim() === '' ? null : (raw.APP_IDE as string).trim(),
    PROFILER_STORAGE: raw.PROFILER_STORAGE as ServiceEnv['PROFILER_STORAGE'],
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
