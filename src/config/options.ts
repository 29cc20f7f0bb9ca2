import { Ajv } from 'ajv'
import { errorCodes } from '../errors/codes.js'
import { ajvProblems } from './ajv-problems.js'
import { fileLinkFormatProblem } from '../errors/file-link.js'
import type { ErrorPageFormat, JsonErrors } from '../errors/error-controller.js'
import { invalidHostPatterns } from '../routing/trusted-hosts.js'
import type { Clock } from '../clock.js'
import { isClock, systemClock } from '../clock.js'

export type { ErrorPageFormat, JsonErrors }

/**
 * The kernel's own options of `app.register(kernel, options)`. The features' options (profiler,
 * session, locale, security) are the features' own: `KernelOptions` (`plugins/kernel-options.ts`)
 * puts them together where the app is composed, and each feature resolves its own there.
 */
export interface CoreOptions {
  /** detailed error pages and debug headers; default false */
  debug?: boolean
  /** send `X-Robots-Tag: noindex` on every response; default: on in debug, off otherwise */
  disallowRobotsIndexing?: boolean
  /**
   * install the kernel's not-found handler for the whole app (default true). Set false when the
   * app has its own, and call `app.kernel.notFound(request, reply)` from it.
   */
  notFoundHandler?: boolean
  /**
   * record every stage and listener with its timing in `request.kernel.trace` (the profiler's
   * timeline); default: on in debug. Off, stages without listeners cost nothing.
   */
  trace?: boolean
  /**
   * debug pages: turns file references into "open in editor" links, as Symfony's `framework.ide`:
   * a format with `%f` (file) and `%l` (line), e.g. `vscode://file/%f:%l`, or an editor's name
   * (`vscode`, `phpstorm`, `webstorm`, `idea`, `sublime`, …); `&/from>/to` path mappings may follow
   */
  fileLinkFormat?: string
  /**
   * milliseconds a request may take to send its body (default 30000; 0: no limit). A body still
   * incomplete then is answered 408 through the error pages and its connection closed
   */
  bodyTimeout?: number
  /**
   * Symfony's `trusted_hosts`: regular expressions (case-insensitive, unanchored: write
   * `^example\.com$`) the request's host must match; any other host gets 400
   * `Untrusted Host "…".`. Default: none, every host is accepted
   */
  trustedHosts?: string[]
  /**
   * the format of error responses whatever the client accepts, as a route's `config.format`
   * (Symfony's `_format`) says it for one route: `'json'` or `'html'` for the whole app, or by path
   * prefix (`{ '/api': 'json' }`: `/api` and below). Default: none, the format follows `Accept`
   */
  format?: ErrorPageFormat | Record<string, ErrorPageFormat>
  /**
   * the JSON body of errors: `'problem'` (default: `{ type, title, status, detail }`) or
   * `'fastify'`, Fastify's own `{ statusCode, code, error, message }`, for apps whose clients
   * already read Fastify's errors
   */
  jsonErrors?: JsonErrors
  /**
   * with `jsonErrors: 'fastify'`: a production 5xx's `message` (and an error's marked
   * `expose: false`) is the error's own, byte for byte what bare Fastify sends, instead of its
   * status text (default false: nothing internal reaches a client). Named after http-errors'
   * `expose`, which says the same of one error
   */
  exposeServerErrors?: boolean
  /**
   * the time the kernel's stores read: the profile storages (`maxAge`, the Redis storage's retry
   * delay), the default session store (`ttl`) and login throttling (`interval`, in memory).
   * Default: the system clock. For tests: a clock they advance instead of waiting. Request
   * timings, profile timestamps and time bounds on I/O always use the real time.
   */
  clock?: Clock
}

export interface ResolvedCoreOptions {
  debug: boolean
  disallowRobotsIndexing: boolean
  notFoundHandler: boolean
  trace: boolean
  bodyTimeout: number
  fileLinkFormat: string | undefined
  trustedHosts: string[]
  /** the format imposed on the error responses of a path, if any (the `format` option) */
  formatOfPath: (path: string) => ErrorPageFormat | undefined
  jsonErrors: JsonErrors
  exposeServerErrors: boolean
  clock: Clock
}

const schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    debug: { type: 'boolean' },
    disallowRobotsIndexing: { type: 'boolean' },
    notFoundHandler: { type: 'boolean' },
    trace: { type: 'boolean' },
    bodyTimeout: { type: 'integer', minimum: 0 },
    fileLinkFormat: { type: 'string' },
    trustedHosts: { type: 'array', items: { type: 'string', minLength: 1 } },
    // checked by formatProblems: ajv would name an alternative's failures confusingly
    format: { type: ['string', 'object'] },
    jsonErrors: { enum: ['problem', 'fastify'] },
    exposeServerErrors: { type: 'boolean' },
    clock: { type: 'object' },
    // added by Fastify's register() itself
    prefix: { type: 'string' },
    logLevel: { type: 'string' },
    logSerializers: { type: 'object' }
  }
} as const

const validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(schema)

/**
 * Validates the kernel's own options and fills in defaults; fails with every problem named, the
 * features' (`featureProblems`, found where the app is composed) after the kernel's own, so
 * that one refusal names every bad option of the call.
 */
export function resolveCoreOptions (options: unknown, featureProblems: readonly string[] = []): ResolvedCoreOptions {
  const given = options ?? {}
  const problems = validate(given) ? [] : ajvProblems(validate.errors ?? [], '')
  const o = given as CoreOptions
  if (o.clock !== undefined && !isClock(o.clock)) problems.push('option "clock" must have now() and monotonic() functions')
  const badPatterns = Array.isArray(o.trustedHosts) ? invalidHostPatterns(o.trustedHosts.filter((p) => typeof p === 'string')) : []
  if (badPatterns.length > 0) problems.push(`option "trustedHosts" has patterns that are not regular expressions: ${badPatterns.join('; ')}`)
  problems.push(...formatProblems(o.format))
  if (o.exposeServerErrors === true && o.jsonErrors !== 'fastify') problems.push('option "exposeServerErrors" applies to Fastify\'s error shape: set jsonErrors: \'fastify\' with it')
  const linkProblem = typeof o.fileLinkFormat === 'string' ? fileLinkFormatProblem(o.fileLinkFormat) : undefined
  if (linkProblem !== undefined) problems.push(linkProblem)
  problems.push(...featureProblems)
  if (problems.length > 0) {
    throw new errorCodes.KERNEL_INVALID_OPTIONS(`invalid options: ${problems.join('; ')}.`)
  }
  const debug = o.debug ?? false
  return {
    debug,
    disallowRobotsIndexing: o.disallowRobotsIndexing ?? debug,
    notFoundHandler: o.notFoundHandler ?? true,
    trace: o.trace ?? debug,
    bodyTimeout: o.bodyTimeout ?? 30_000,
    fileLinkFormat: o.fileLinkFormat,
    trustedHosts: o.trustedHosts ?? [],
    formatOfPath: formatsByPrefix(o.format),
    jsonErrors: o.jsonErrors ?? 'problem',
    exposeServerErrors: o.exposeServerErrors ?? false,
    clock: o.clock ?? systemClock
  }
}

const FORMATS = new Set<unknown>(['html', 'json'])

function formatProblems (option: unknown): string[] {
  if (typeof option === 'string') return FORMATS.has(option) ? [] : ['option "format" must be "html" or "json", or an object of path prefixes']
  if (typeof option !== 'object' || option === null) return []
  return Object.entries(option).flatMap(([prefix, format]) => [
    ...(prefix.startsWith('/') ? [] : [`option "format" has a prefix that does not start with "/": "${prefix}"`]),
    ...(FORMATS.has(format) ? [] : [`option "format[${JSON.stringify(prefix)}]" must be "html" or "json"`])
  ])
}

/**
 * The `format` option as a lookup: one format for every path, or the longest prefix that is
 * the path itself or a parent of it (`/api` covers `/api` and `/api/users`, not `/apiary`).
 */
function formatsByPrefix (option: CoreOptions['format']): ResolvedCoreOptions['formatOfPath'] {
  if (option === undefined) return () => undefined
  if (typeof option === 'string') return () => option
  const prefixes = Object.entries(option)
    .map(([prefix, format]) => [prefix.replace(/\/+$/, ''), format] as const)
    .sort(([a], [b]) => b.length - a.length)
  return (path) => {
    for (const [prefix, format] of prefixes) {
      if (prefix === '' || path === prefix || path.startsWith(prefix + '/')) return format
    }
    return undefined
  }
}
