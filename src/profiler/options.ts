import { Ajv } from 'ajv'
import { errorCodes } from '../errors/codes.js'
import { parseNetworks } from './access.js'
import type { Network } from './access.js'
import type { RedisCommands } from '../redis/commands.js'
import { REDIS_CLIENT_OPTIONS_SCHEMA } from '../redis/commands.js'
import { DEFAULT_REDACT_PATTERN } from '../http/redact.js'

/** Options of the web profiler: `app.register(kernel, { debug: true, profiler: { ... } })`. */
export interface ProfilerOptions {
  /**
   * where profiles are kept: `memory` (bounded LRU, the plugin's default; per process), `file`
   * (one process per folder) or `redis` (shared by every process; needs `redis.client`)
   */
  storage?: 'memory' | 'file' | 'redis'
  /** folder of the file storage; default `var/profiler` under the working directory */
  directory?: string
  /** the Redis storage: the app's ioredis client (never closed by the kernel), a key prefix, a time bound per call */
  redis?: { client: RedisCommands, prefix?: string, commandTimeout?: number }
  /** most profiles kept; the oldest are purged first (default 2000) */
  maxProfiles?: number
  /** seconds a profile is kept (default 172800: two days) */
  maxAge?: number
  /** memory storage only: most bytes of serialised profiles kept (default 64 MiB) */
  maxMemory?: number
  /** CIDRs of the clients that may open the profiler; default loopback and private networks */
  allowedNetworks?: string[]
  /**
   * host names (without port) the profiler answers for besides the local ones (`localhost`,
   * `*.localhost`, `*.test`, loopback and private addresses): a request naming any other host is
   * taken to come through a reverse proxy, unless Fastify trusts the proxy (`trustProxy`)
   */
  allowedHosts?: string[]
  /**
   * most share of the main thread spent building and serialising profiles, per second (default
   * 0.05); beyond it, under heavy load, further requests of the second are not profiled rather
   * than slowing the app. 1: never for it
   */
  saveBudget?: number
  /** profiles always kept each second, whatever `saveBudget` says (default 200) */
  keepPerSecond?: number
  /**
   * more header or field names to mask, and the pattern of names masked (a regular expression,
   * case-insensitive); the debug error page masks with the same policy
   */
  redact?: { names?: string[], pattern?: string }
  /** the web debug toolbar injected into HTML pages (default true) */
  toolbar?: boolean
  /**
   * most spans (HTTP calls, SQL statements, Redis commands, renders, the app's own) kept in one
   * profile (default 1000); beyond it they are counted, not kept
   */
  maxSpans?: number
  /**
   * milliseconds above which a toolbar item is highlighted: `http_client`, `db`, `cache`, the
   * time the request spent in that panel's calls (defaults 1000, 100, 50); `slow_statement`, a
   * single SQL statement highlighted as slow in the Database panel (default 10); `time`, the
   * request's total time (default 1000); `templates`, the time spent rendering (default 100)
   */
  thresholds?: { http_client?: number, db?: number, cache?: number, slow_statement?: number, slow_http_call?: number, time?: number, templates?: number }
  /**
   * where each SQL statement, Redis command, HTTP call, render and stopwatch period was started
   * in the app's code (file:line, as an editor link): a stack captured per span, a few µs each
   * (`npm run bench` prints it). Default true
   */
  origins?: boolean
}

/** Toolbar thresholds, in milliseconds, by panel. */
export interface Thresholds {
  http_client: number
  db: number
  cache: number
  slow_statement: number
  /** one HTTP call this slow or slower is highlighted in the HTTP Client panel */
  slow_http_call: number
  time: number
  templates: number
}

export const DEFAULT_THRESHOLDS: Thresholds = { http_client: 1000, db: 100, cache: 50, slow_statement: 10, slow_http_call: 500, time: 1000, templates: 100 }

export interface ResolvedProfilerOptions {
  storage: 'memory' | 'file' | 'redis'
  directory: string
  redis: { client: RedisCommands, prefix?: string, commandTimeoutMs: number } | undefined
  maxProfiles: number
  maxAgeMs: number
  maxMemory: number
  allowedNetworks: Network[]
  allowedHosts: string[]
  redactNames: string[]
  redactPattern: RegExp
  saveBudget: number
  keepPerSecond: number
  toolbar: boolean
  maxSpans: number
  thresholds: Thresholds
  origins: boolean
}

/** Loopback, RFC 1918, link-local and unique-local ranges: reachable from a container's host. */
export const DEFAULT_ALLOWED_NETWORKS = [
  '127.0.0.0/8', '::1/128',
  '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16',
  'fc00::/7', 'fe80::/10'
]
/** A host name or address as a Host header names it, without the port: `devbox.lan`, `[fd00::1]`. */
const HOST_NAME = /^(?:\[[0-9a-f:.]+\]|[^\s/:@[\]]+)$/i
export const DEFAULT_MAX_PROFILES = 2000
export const DEFAULT_MAX_AGE_SECONDS = 2 * 24 * 3600

const schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    storage: { enum: ['memory', 'file', 'redis'] },
    directory: { type: 'string', minLength: 1 },
    redis: REDIS_CLIENT_OPTIONS_SCHEMA,
    maxProfiles: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    maxAge: { type: 'number', exclusiveMinimum: 0 },
    maxMemory: { type: 'integer', minimum: 1024 },
    allowedNetworks: { type: 'array', items: { type: 'string' } },
    allowedHosts: { type: 'array', items: { type: 'string', minLength: 1 } },
    saveBudget: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
    keepPerSecond: { type: 'integer', minimum: 0 },
    toolbar: { type: 'boolean' },
    maxSpans: { type: 'integer', minimum: 0, maximum: 100_000 },
    origins: { type: 'boolean' },
    thresholds: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(Object.keys(DEFAULT_THRESHOLDS).map((name) => [name, { type: 'number', minimum: 0 }]))
    },
    redact: {
      type: 'object',
      additionalProperties: false,
      properties: {
        names: { type: 'array', items: { type: 'string', minLength: 1 } },
        pattern: { type: 'string', minLength: 1 }
      }
    }
  }
} as const

const validate = new Ajv({ allErrors: true, strict: true }).compile(schema)

function fail (problems: string[]): never {
  throw new errorCodes.KERNEL_INVALID_OPTIONS(`invalid options: ${problems.join('; ')}.`)
}

/**
 * Validates `profiler` (boolean or object) and fills in defaults. `false` gives undefined (off);
 * every bad sub-option is named, as `option "profiler.maxProfiles" must be integer`.
 */
export function resolveProfilerOptions (given: boolean | ProfilerOptions | Record<string, unknown> | undefined, defaultOn: boolean): ResolvedProfilerOptions | undefined {
  if (given === false || (given === undefined && !defaultOn)) return undefined
  const options = (given === true || given === undefined ? {} : given)
  if (!validate(options)) {
    fail((validate.errors ?? []).map((e) => {
      if (e.keyword === 'additionalProperties') {
        const parent = e.instancePath === '' ? 'profiler' : `profiler${e.instancePath.replace(/\//g, '.')}`
        return `unknown option "${parent}.${String(e.params.additionalProperty)}"`
      }
      const name = `profiler${e.instancePath.replace(/\//g, '.')}`
      const allowed = e.keyword === 'enum' ? ` (${(e.params.allowedValues as string[]).join(', ')})` : ''
      return `option "${name}" ${e.message ?? 'is invalid'}${allowed}`
    }))
  }
  const o = options as ProfilerOptions
  const problems: string[] = []
  let allowedNetworks: Network[] = []
  try {
    allowedNetworks = parseNetworks(o.allowedNetworks ?? DEFAULT_ALLOWED_NETWORKS)
  } catch (error) {
    problems.push(`option "profiler.allowedNetworks": ${(error as Error).message}`)
  }
  let redactPattern = new RegExp(DEFAULT_REDACT_PATTERN, 'i')
  if (o.redact?.pattern !== undefined) {
    try {
      redactPattern = new RegExp(o.redact.pattern, 'i')
    } catch (error) {
      problems.push(`option "profiler.redact.pattern" is not a regular expression: ${(error as Error).message}`)
    }
  }
  const notHosts = (o.allowedHosts ?? []).filter((host) => !HOST_NAME.test(host.trim()))
  if (notHosts.length > 0) {
    problems.push(`option "profiler.allowedHosts": not a host name (no scheme, port or path; an IPv6 address in brackets): ${notHosts.map((host) => JSON.stringify(host)).join(', ')}`)
  }
  if (o.storage === 'redis' && typeof o.redis?.client?.call !== 'function') {
    problems.push('option "profiler.redis.client" must be a Redis client (ioredis) when "profiler.storage" is "redis"')
  }
  if (problems.length > 0) fail(problems)
  return {
    storage: o.storage ?? 'memory',
    directory: o.directory ?? 'var/profiler',
    redis: o.redis === undefined ? undefined : { client: o.redis.client, ...(o.redis.prefix === undefined ? {} : { prefix: o.redis.prefix }), commandTimeoutMs: o.redis.commandTimeout ?? 500 },
    maxProfiles: o.maxProfiles ?? DEFAULT_MAX_PROFILES,
    maxAgeMs: (o.maxAge ?? DEFAULT_MAX_AGE_SECONDS) * 1000,
    maxMemory: o.maxMemory ?? 64 * 1024 * 1024,
    allowedNetworks,
    allowedHosts: o.allowedHosts ?? [],
    redactNames: (o.redact?.names ?? []).map((n) => n.toLowerCase()),
    redactPattern,
    saveBudget: o.saveBudget ?? 0.05,
    keepPerSecond: o.keepPerSecond ?? 200,
    toolbar: o.toolbar ?? true,
    maxSpans: o.maxSpans ?? 1000,
    thresholds: { ...DEFAULT_THRESHOLDS, ...o.thresholds },
    origins: o.origins ?? true
  }
}
