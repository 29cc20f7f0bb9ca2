import { Ajv } from 'ajv'
import { errorCodes } from '../errors/codes.js'
import { parseNetworks } from './access.js'
import type { Network } from './access.js'
import type { RedisCommands } from '../redis/commands.js'
import { REDIS_CLIENT_OPTIONS_SCHEMA } from '../redis/commands.js'
import { DEFAULT_REDACT_PATTERN } from '../http/redact.js'
import type { ProfileStorage } from './storage/storage.js'
import { captureMode } from './capture.js'
import type { CaptureMode, CaptureOption } from './capture.js'
import { integrationProblems } from './integration.js'
import type { ProfilerIntegration } from './integration.js'
import { DEFAULT_THRESHOLDS } from './thresholds.js'
import type { Thresholds } from './thresholds.js'
import { CAPTURE_GUARD_SCHEMA, captureGuardProblems, resolveCaptureGuards } from './guards/options.js'
import type { CaptureGuardOptions, ResolvedCaptureGuards } from './guards/options.js'

/**
 * Options of the web profiler: `app.register(kernel, { debug: true, profiler: { ... } })`; the
 * capture guards' (`excludedPaths`, `excludedHttpCodes`, `keepExceptions`, `maxEventLoopDelay`)
 * are described in `guards/options.ts`.
 */
export interface ProfilerOptions extends CaptureGuardOptions {
  /**
   * where profiles are kept: `file` (the default: a folder every process of the app writes and
   * reads at once: servers, cluster workers, queue workers, commands), `memory` (bounded LRU,
   * this process only; nothing on disk), `redis` (shared by every process and host; needs
   * `redis.client`), or the app's own storage, an object implementing `ProfileStorage`
   * (docs/profiler.md, "Storage"): used as is, it keeps its own bounds, and the kernel closes it
   * when the app closes
   */
  storage?: BuiltInStorage | ProfileStorage
  /**
   * folder of the file storage; default `var/profiler` under the app's root (the nearest folder
   * holding a `package.json` above the script Node was started with, whatever the working
   * directory); a relative path is taken from the working directory
   */
  directory?: string
  /** the Redis storage: the app's ioredis client (never closed by the kernel), a key prefix, a time bound per call */
  redis?: { client: RedisCommands, prefix?: string, commandTimeout?: number }
  /**
   * which units of work are recorded: `'all'` (default), `{ sample: percent }`, `{ slowerThan:
   * ms }` (kept when the response came that late), `'errors'` (kept when it failed: a status of
   * 400 and over, or it threw), `'on-demand'` (only those that ask: the `X-Kernel-Profile`
   * header, or a browser whose requests are switched on from the profiler's search page). A
   * request that asks is recorded in every mode
   */
  capture?: CaptureOption
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
   * 0.05); beyond it, under heavy load, further units of the second are not profiled rather
   * than slowing the app. The memory storage builds nothing as a unit ends: there it is the
   * share of units recorded past `keepPerSecond` in a second. 1: never for it (full capture)
   */
  saveBudget?: number
  /** profiles always kept each second, whatever `saveBudget` says (default 200) */
  keepPerSecond?: number
  /**
   * more header or field names to mask, and the pattern of names masked (a regular expression,
   * case-insensitive); the debug error page masks with the same policy
   */
  redact?: { names?: string[], pattern?: string }
  /**
   * the web debug toolbar injected into HTML pages (default true); `{ ajaxReplace: true }`, as
   * Symfony 7.3's `ajax_replace`: each fetch()/XHR response of the page says
   * `X-Debug-Toolbar-Replace: 1`, and the toolbar then shows that request's profile
   */
  toolbar?: boolean | { ajaxReplace?: boolean }
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
  /**
   * the built-in panels switched off, by name (`{ mail: false }`): nothing of one is installed
   * (its library left unpatched, its channels unsubscribed, no panel, no route). Default: all on
   */
  panels?: Record<string, boolean>
  /**
   * the app's own integrations (`ProfilerIntegration`: a panel with its capture, routes…), set
   * up after the built-in ones, the same way (docs/getting-started.md shows one)
   */
  integrations?: ProfilerIntegration[]
}

/** The storages the kernel opens itself, from these options. */
export type BuiltInStorage = 'memory' | 'file' | 'redis'

export interface ResolvedProfilerOptions {
  /** a built-in storage's name, or the app's own storage */
  storage: BuiltInStorage | ProfileStorage
  capture: CaptureMode
  /** what keeps a profiler left on cheap: exclusions, kept exceptions, the lag pause */
  guards: ResolvedCaptureGuards
  /** the file storage's folder as given; undefined: the default, under the app's root (filled in when the storage opens) */
  directory: string | undefined
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
  /** the toolbar takes the profile of the page's latest fetch()/XHR (its response says so) */
  toolbarAjaxReplace: boolean
  maxSpans: number
  thresholds: Thresholds
  origins: boolean
  /** the built-in panels switched off (`panels: { name: false }`) */
  panelsOff: ReadonlySet<string>
  /** the app's own integrations */
  integrations: readonly ProfilerIntegration[]
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
    // a built-in storage's name, or an object: what it must have is checked by storageProblems()
    storage: { type: ['string', 'object'], if: { type: 'string' }, then: { enum: ['memory', 'file', 'redis'] } },
    // checked by captureMode(), which names the forms it takes
    capture: {},
    ...CAPTURE_GUARD_SCHEMA,
    directory: { type: 'string', minLength: 1 },
    redis: REDIS_CLIENT_OPTIONS_SCHEMA,
    maxProfiles: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    maxAge: { type: 'number', exclusiveMinimum: 0 },
    maxMemory: { type: 'integer', minimum: 1024 },
    allowedNetworks: { type: 'array', items: { type: 'string' } },
    allowedHosts: { type: 'array', items: { type: 'string', minLength: 1 } },
    saveBudget: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
    keepPerSecond: { type: 'integer', minimum: 0 },
    toolbar: { anyOf: [{ type: 'boolean' }, { type: 'object', additionalProperties: false, properties: { ajaxReplace: { type: 'boolean' } } }] },
    maxSpans: { type: 'integer', minimum: 0, maximum: 100_000 },
    origins: { type: 'boolean' },
    // each name is checked against the built-in panels' (resolveProfilerOptions' `builtIns`)
    panels: { type: 'object', additionalProperties: { type: 'boolean' } },
    // each one's shape is checked by integrationProblems(), which names what is wrong
    integrations: { type: 'array' },
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

const validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(schema)

/** What a storage object must have (`ProfileStorage`), beside a `kind` and a `size`. */
const STORAGE_METHODS = ['reserveToken', 'releaseToken', 'save', 'load', 'find', 'purge', 'close'] as const
/** Options of the storages the kernel opens: a storage object keeps its own bounds. */
const BUILT_IN_STORAGE_OPTIONS = ['directory', 'redis', 'maxProfiles', 'maxAge', 'maxMemory'] as const
/** A storage's kind, as pages, logs and the console name it (`memory`, `sqlite`…). */
const STORAGE_KIND = /^[a-z][a-z0-9_-]{0,31}$/

/** What an app's storage object lacks, each named; and the built-in storages' options given beside it. */
function storageProblems (storage: Record<string, unknown>, options: Record<string, unknown>): string[] {
  const problems: string[] = []
  const lacking: string[] = STORAGE_METHODS.filter((name) => typeof storage[name] !== 'function').map((name) => `${name}()`)
  if (typeof storage.kind !== 'string') lacking.push('kind')
  if (typeof storage.size !== 'number') lacking.push('size')
  if (lacking.length > 0) problems.push(`option "profiler.storage" is not a profile storage: it has no ${lacking.join(', ')} (ProfileStorage, docs/profiler.md "Storage")`)
  else if (!STORAGE_KIND.test(storage.kind as string)) problems.push(`option "profiler.storage": its kind must be a short lower-case name (${STORAGE_KIND.source}), got ${JSON.stringify(storage.kind)}`)
  const builtIn = BUILT_IN_STORAGE_OPTIONS.filter((name) => options[name] !== undefined).map((name) => `"profiler.${name}"`)
  if (builtIn.length > 0) problems.push(`option${builtIn.length > 1 ? 's' : ''} ${builtIn.join(', ')} configure${builtIn.length > 1 ? '' : 's'} the kernel's own storages: a storage object keeps its own bounds`)
  return problems
}

function fail (problems: string[]): never {
  throw new errorCodes.KERNEL_INVALID_OPTIONS(`invalid options: ${problems.join('; ')}.`)
}

/** What is wrong with `panels` and `integrations`, given the built-in panels' names. */
function integrationOptionProblems (o: ProfilerOptions, builtIns: readonly string[]): string[] {
  const problems: string[] = []
  const unknown = Object.keys(o.panels ?? {}).filter((name) => !builtIns.includes(name))
  if (unknown.length > 0) {
    problems.push(`option "profiler.panels" names no built-in panel: ${unknown.map((name) => JSON.stringify(name)).join(', ')} (the built-in ones: ${builtIns.join(', ')})`)
  }
  const names = new Set(builtIns.filter((name) => o.panels?.[name] !== false))
  for (const [index, integration] of (o.integrations ?? []).entries()) {
    const own = integrationProblems(integration, index)
    problems.push(...own)
    if (own.length > 0) continue
    if (names.has(integration.name)) {
      problems.push(`option "profiler.integrations[${index}]": "${integration.name}" is ${builtIns.includes(integration.name) ? 'a built-in panel\'s name (switch it off with panels: { ' + integration.name + ': false } to replace it)' : 'the name of another integration'}`)
    }
    names.add(integration.name)
  }
  return problems
}

/**
 * Validates `profiler` (boolean or object) and fills in defaults. `false` gives undefined (off);
 * every bad sub-option is named, as `option "profiler.maxProfiles" must be integer`. `builtIns`:
 * the names of the built-in panels (`profiler.panels` switches them off), given by the
 * composition, since the profiler's core knows none of them.
 */
export function resolveProfilerOptions (given: boolean | ProfilerOptions | Record<string, unknown> | undefined, defaultOn: boolean, builtIns: readonly string[] = []): ResolvedProfilerOptions | undefined {
  if (given === false || (given === undefined && !defaultOn)) return undefined
  const options = (given === true || given === undefined ? {} : given)
  if (!validate(options)) {
    // the `if` of the storage's schema says only that its `then` failed, which names the problem
    fail((validate.errors ?? []).filter((e) => e.keyword !== 'if').map((e) => {
      if (e.keyword === 'additionalProperties') {
        const parent = e.instancePath === '' ? 'profiler' : `profiler${e.instancePath.replace(/\//g, '.')}`
        return `unknown option "${parent}.${String(e.params.additionalProperty)}"`
      }
      if (e.instancePath === '/storage' && e.keyword === 'type') return 'option "profiler.storage" must be "memory", "file", "redis" or a storage object'
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
  const capture = captureMode(o.capture)
  if (typeof capture === 'string') problems.push(capture)
  problems.push(...captureGuardProblems(o))
  if (typeof o.storage === 'object') problems.push(...storageProblems(o.storage as unknown as Record<string, unknown>, o as Record<string, unknown>))
  if (o.storage === 'redis' && typeof o.redis?.client?.call !== 'function') {
    problems.push('option "profiler.redis.client" must be a Redis client (ioredis) when "profiler.storage" is "redis"')
  }
  problems.push(...integrationOptionProblems(o, builtIns))
  if (problems.length > 0) fail(problems)
  return {
    storage: o.storage ?? 'file',
    capture: capture as CaptureMode,
    guards: resolveCaptureGuards(o),
    directory: o.directory,
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
    toolbar: o.toolbar !== false,
    toolbarAjaxReplace: typeof o.toolbar === 'object' && o.toolbar.ajaxReplace === true,
    maxSpans: o.maxSpans ?? 1000,
    thresholds: { ...DEFAULT_THRESHOLDS, ...o.thresholds },
    origins: o.origins ?? true,
    panelsOff: new Set(Object.entries(o.panels ?? {}).filter(([, on]) => !on).map(([name]) => name)),
    integrations: [...o.integrations ?? []]
  }
}
