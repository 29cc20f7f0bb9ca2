import { STATUS_CODES } from 'node:http'
import { fileURLToPath } from 'node:url'
import { HttpException } from './exceptions.js'
import { qualifiedClassName } from './class-names.js'

export interface StackFrame {
  function: string
  /** absolute path (or `node:…`), of the original source when a source map said where it came from */
  file: string
  line: number
  column: number
  /** Node's own code, a dependency's or the kernel's: folded away on the debug page */
  vendor: boolean
  /** debug pages: the path shown, relative to the project root */
  display?: string
  /** debug pages: the "open in editor" link, when `fileLinkFormat` is set */
  link?: string
  /** debug pages: the lines around `line`, for frames of application code */
  excerpt?: SourceLine[]
}

/** One line of a source excerpt; `current` is the line the frame points at. */
export interface SourceLine {
  number: number
  text: string
  current: boolean
}

/** One exception of a chain, as plain data: what the error pages and the profiler show. */
export interface FlatException {
  class: string
  code?: string
  message: string
  statusCode: number
  statusText: string
  /**
   * whether the exception itself carries the status (an HTTP exception, or an error with a
   * 4xx/5xx `statusCode`); a cause that does not is no "500 Internal Server Error" of its own
   */
  isHttp: boolean
  headers: Record<string, string>
  file: string
  line: number
  trace: StackFrame[]
}

const MAX_CHAIN = 16
const FRAME = /^\s*at (?:(.+?) \()?(.+?):(\d+):(\d+)\)?$/

export function statusText (statusCode: number): string {
  return STATUS_CODES[statusCode] ?? 'Unknown Status'
}

/**
 * The status an error answers with, by Fastify's rule (its `lib/error-handler.js` and
 * `lib/error-status.js`): an HttpException's own, else a 4xx/5xx `statusCode`, else a 4xx/5xx
 * `status` (http-errors), else the 4xx/5xx status the app set on the reply before the error
 * (`reply.code(503)`: see `ExceptionEvent.statusCode`), otherwise 500.
 */
export function statusOf (error: unknown, replyStatus?: number): number {
  return ownStatusOf(error) ?? (replyStatus !== undefined && isErrorStatus(replyStatus) ? replyStatus : 500)
}

function isErrorStatus (status: unknown): status is number {
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599
}

/** The status an error carries itself, if any. */
function ownStatusOf (error: unknown): number | undefined {
  if (error instanceof HttpException) return error.statusCode
  if (typeof error === 'object' && error !== null) {
    const { statusCode, status } = error as { statusCode?: unknown, status?: unknown }
    if (isErrorStatus(statusCode)) return statusCode
    if (isErrorStatus(status)) return status
  }
  return undefined
}

/**
 * The chain as answered: an outermost exception that carries no status of its own answers with
 * the one the app set on the reply (Fastify's rule, `statusOf`). The chain itself is left as is.
 */
export function withReplyStatus (chain: FlatException[], replyStatus: number | undefined): FlatException[] {
  const outer = chain[0]
  if (outer === undefined || outer.isHttp || replyStatus === undefined || !isErrorStatus(replyStatus)) return chain
  return [{ ...outer, statusCode: replyStatus, statusText: statusText(replyStatus) }, ...chain.slice(1)]
}

/** Headers only the kernel may set on an error page: its own body decides them. */
const KERNEL_OWNED_HEADERS = new Set(['content-type', 'content-length', 'transfer-encoding'])
/** A value Node would refuse in a header (a control character): such a header is dropped, not a crash. */
const INVALID_HEADER_VALUE = /[^\t\x20-\x7e\x80-\xff]/

function headerValue (value: unknown): string | undefined {
  if (typeof value === 'string') return value
  if (typeof value === 'number') return String(value)
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value.join(', ') : undefined
}

/**
 * The headers an error asks its response to carry: an HttpException's, and, as Fastify's own
 * error handler sends them, the `headers` of any error (http-errors, @fastify/sensible, a plain
 * object with `statusCode` and `headers`): `WWW-Authenticate` of a 401, `Retry-After` of a 503.
 * Content type and length are the page's own; a value with a control character is left out.
 */
export function headersOf (error: unknown): Record<string, string> {
  const own = typeof error === 'object' && error !== null ? (error as { headers?: unknown }).headers : undefined
  if (typeof own !== 'object' || own === null) return {}
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(own)) {
    if (KERNEL_OWNED_HEADERS.has(name.toLowerCase())) continue
    const text = headerValue(value)
    if (text !== undefined && !INVALID_HEADER_VALUE.test(text)) headers[name] = text
  }
  return headers
}

// stack frames name the same few files over and over: their paths are converted once
const FILE_PATHS = new Map<string, string>()
const MAX_FILE_PATHS = 1024

function pathOfFileUrl (url: string): string {
  let path = FILE_PATHS.get(url)
  if (path === undefined) {
    try { path = fileURLToPath(url) } catch { path = url }
    if (FILE_PATHS.size >= MAX_FILE_PATHS) FILE_PATHS.clear()
    FILE_PATHS.set(url, path)
  }
  return path
}

export function parseStack (stack: string | undefined): StackFrame[] {
  if (stack === undefined) return []
  const frames: StackFrame[] = []
  for (const line of stack.split('\n')) {
    const m = FRAME.exec(line)
    if (m === null) continue
    const file = m[2].startsWith('file://') ? pathOfFileUrl(m[2]) : m[2]
    frames.push({
      function: m[1] ?? '(anonymous)',
      file,
      line: Number(m[3]),
      column: Number(m[4]),
      vendor: file.startsWith('node:') || file.includes('/node_modules/')
    })
  }
  return frames
}

/**
 * What a thrown value that is not an Error says: its `message` (a body another plugin built,
 * such as @fastify/rate-limit's `errorResponseBuilder` result), else its JSON, never `[object Object]`.
 */
export function readableMessage (value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value !== 'object' || value === null) return String(value)
  const { message, error } = value as { message?: unknown, error?: unknown }
  if (typeof message === 'string' && message !== '') return message
  if (typeof error === 'string' && error !== '') return error
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return Object.prototype.toString.call(value)
  }
}

/** A stack's frames: `parseStack`, or frames described for a debug page (`SourceExcerpts`). */
export type TraceReader = (stack: string | undefined) => StackFrame[]

function flattenOne (error: unknown, withTrace: boolean, traceOf: TraceReader): FlatException {
  const own = ownStatusOf(error)
  const statusCode = own ?? 500
  if (!(error instanceof Error)) {
    const code = (error as { code?: unknown } | null)?.code
    return {
      class: typeof error === 'object' && error !== null ? 'Object' : typeof error,
      ...(typeof code === 'string' ? { code } : {}),
      message: readableMessage(error),
      statusCode,
      statusText: statusText(statusCode),
      isHttp: own !== undefined,
      headers: headersOf(error),
      file: '',
      line: 0,
      trace: []
    }
  }
  // formatting a stack is the costliest part of an error response: only debug pages show it
  const trace = withTrace ? traceOf(error.stack) : []
  const code = (error as { code?: unknown }).code
  return {
    class: qualifiedClassName(error),
    ...(typeof code === 'string' ? { code } : {}),
    message: error.message,
    statusCode,
    statusText: statusText(statusCode),
    isHttp: own !== undefined,
    headers: headersOf(error),
    file: trace[0]?.file ?? '',
    line: trace[0]?.line ?? 0,
    trace
  }
}

/**
 * The exception and its causes, outermost first (cycle-safe, at most 16 deep), with parsed
 * stack traces when `withTrace`; without, only the outermost exception (all production shows).
 */
export function flattenChain (error: unknown, withTrace = true, traceOf: TraceReader = parseStack): FlatException[] {
  if (!withTrace) return [flattenOne(error, false, traceOf)]
  const chain: FlatException[] = []
  const seen = new Set<unknown>()
  let current: unknown = error
  while (current !== undefined && current !== null && !seen.has(current) && chain.length < MAX_CHAIN) {
    seen.add(current)
    chain.push(flattenOne(current, true, traceOf))
    current = current instanceof Error ? current.cause : undefined
  }
  return chain
}
