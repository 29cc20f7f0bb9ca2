import type { ErrorFormat } from '../http/negotiate.js'
import { rawUrlEncode } from '../http/encoding.js'
import type { FlatException } from './flatten.js'
import { flattenChain, withReplyStatus } from './flatten.js'
import { traceView } from './trace-view.js'

/** A format an app or a route may impose on its error responses. */
export type ErrorPageFormat = 'html' | 'json'
/** The body of a JSON error: RFC 7807 problem details, or Fastify's own shape. */
export type JsonErrors = 'problem' | 'fastify'

/** What the error page shows of the request; every string here is client-controlled. */
export interface RequestSummary {
  method: string
  url: string
  headers: Array<{ name: string, value: string }>
  attributes: Array<{ name: string, value: string }>
}

export interface ErrorPageInput {
  error: unknown
  debug: boolean
  format: ErrorFormat
  /** the body of a `json` answer: problem details (default) or Fastify's own shape */
  jsonErrors?: JsonErrors
  /** Fastify's shape: every error keeps its own message, a production 5xx's and an `expose: false` one's too, as bare Fastify's (the `exposeServerErrors` option) */
  exposeServerErrors?: boolean
  /** the 4xx/5xx status the app set on the reply before the error: an error without its own answers with it, as in bare Fastify */
  replyStatus?: number
  request: RequestSummary
  /** the profile of this request, when the profiler is on */
  profile?: { token: string, link: string }
  /** extra blocks the debug page shows (the profiler adds the nearest routes of a 404) */
  hints?: Array<{ title: string, lines: string[] }>
  /** the exception chain already flattened (debug: with source excerpts); default: flattened here */
  chain?: FlatException[]
  /** debug: the nonce of the page's inline style, for a Content-Security-Policy */
  styleNonce?: string
}

/** A response to render: either a finished body (JSON) or a template and its data. */
export interface ErrorResponsePlan {
  statusCode: number
  headers: Record<string, string>
  contentType: string
  body?: string
  template?: string
  model?: Record<string, unknown>
}

const FASTIFY_JSON = 'application/json; charset=utf-8'
const PROBLEM_TYPE = 'https://tools.ietf.org/html/rfc2616#section-10'
const MAX_DEBUG_HEADER_MESSAGE = 2000

/**
 * Symfony's error controller, without Fastify: decides status, headers and body of the error
 * response. Debug answers tell everything; production answers tell the status and nothing else.
 */
export function planErrorResponse (input: ErrorPageInput): ErrorResponsePlan {
  const chain = withReplyStatus(input.chain ?? flattenChain(input.error, input.debug), input.replyStatus)
  const outer = chain[0]
  // copied by assignment: a spread of these objects (of many shapes) costs a 405 page several µs
  const headers: Record<string, string> = Object.assign({}, outer.headers)
  headers.Vary = 'Accept'
  if (input.debug) {
    headers['X-Debug-Exception'] = rawUrlEncode(outer.message.slice(0, MAX_DEBUG_HEADER_MESSAGE))
    headers['X-Debug-Exception-File'] = `${rawUrlEncode(outer.file)}:${outer.line}`
  }

  if (input.format !== 'html' && isBuiltBody(input.error)) {
    // a body another plugin built and threw (@fastify/rate-limit's errorResponseBuilder,
    // @fastify/compress's onUnsupportedRequestEncoding): JSON clients get it as it was built
    return { statusCode: outer.statusCode, headers, contentType: FASTIFY_JSON, body: JSON.stringify(input.error) }
  }

  if (input.format === 'json' && input.jsonErrors === 'fastify') {
    return { statusCode: outer.statusCode, headers, contentType: FASTIFY_JSON, body: JSON.stringify(fastifyErrorBody(outer, input)) }
  }

  if (input.format !== 'html') {
    const body: Record<string, unknown> = {
      type: PROBLEM_TYPE,
      title: 'An error occurred',
      status: outer.statusCode,
      detail: input.debug ? outer.message : outer.statusText
    }
    // RFC 9457's extension member; kept out of a production 5xx, as its message is
    if (outer.code !== undefined && (input.debug || outer.statusCode < 500)) body.code = outer.code
    if (input.debug) {
      body.class = outer.class
      body.trace = outer.trace.map(({ function: fn, file, line }) => ({ function: fn, file, line }))
    }
    return {
      statusCode: outer.statusCode,
      headers,
      contentType: input.format === 'problem' ? 'application/problem+json' : 'application/json',
      body: JSON.stringify(body)
    }
  }

  if (!input.debug) {
    return {
      statusCode: outer.statusCode,
      headers,
      contentType: 'text/html; charset=utf-8',
      template: 'errors/production.hbs',
      model: { statusCode: outer.statusCode, statusText: outer.statusText }
    }
  }

  return {
    statusCode: outer.statusCode,
    headers,
    contentType: 'text/html; charset=utf-8',
    template: 'errors/debug.hbs',
    model: debugModel(chain, input)
  }
}

/** A thrown value that is a response body rather than an error: a plain object with fields of its own. */
function isBuiltBody (error: unknown): boolean {
  return typeof error === 'object' && error !== null && !(error instanceof Error) && Object.keys(error).length > 0
}

/**
 * Fastify's own error body, as its default error handler sends it. The message is the error's
 * in debug and for errors a client may read (4xx, or http-errors' `expose`); a production 5xx
 * (or an error marked `expose: false`) tells its status text only, as every production answer
 * of the kernel does, unless the app asked for Fastify's own bodies (`exposeServerErrors`):
 * bare Fastify sends every error's message, whatever its `expose` (its `lib/error-handler.js`
 * fallbackErrorHandler reads `error.message` alone).
 */
function fastifyErrorBody (outer: FlatException, input: ErrorPageInput): Record<string, unknown> {
  const expose = (input.error as { expose?: unknown } | null)?.expose
  const readable = input.debug || input.exposeServerErrors === true || (typeof expose === 'boolean' ? expose : outer.statusCode < 500)
  return {
    statusCode: outer.statusCode,
    ...(outer.code === undefined ? {} : { code: outer.code }),
    error: outer.statusText,
    message: readable ? outer.message : outer.statusText
  }
}

function debugModel (chain: FlatException[], input: ErrorPageInput): Record<string, unknown> {
  const outer = chain[0]
  return {
    message: outer.message,
    statusCode: outer.statusCode,
    statusText: outer.statusText,
    longMessage: outer.message.length > 180,
    // what the template shows of each exception, copied field by field: spreading the
    // exception (of several shapes) was a tenth of a debug 404's page building
    chain: chain.map((exception, position) => {
      const { items, appFrames } = traceView(exception.trace)
      return { class: exception.class, code: exception.code, message: exception.message, trace: exception.trace, position: chain.length - position, items, appFrames }
    }),
    chainLength: chain.length,
    request: input.request,
    profile: input.profile,
    hints: input.hints ?? [],
    styleNonce: input.styleNonce
  }
}
