import type { ClientRequest, IncomingMessage } from 'node:http'
import type { Redactor } from '../../http/redact.js'
import { truncate } from '../../http/redact.js'
import { currentSpans } from '../spans.js'
import type { OpenSpan, Span } from '../spans.js'
import type { ChannelSubscription } from './channels.js'

export const HTTP_CLIENT = 'http_client'

/** What undici publishes of a request (`undici:request:create`): Node's own `fetch` and the undici package. */
interface UndiciRequest {
  origin: string | URL
  path: string
  method: string
  /** a flat list of names and values (undici 6), or `name: value\r\n` lines (undici 5, Node 20.0 to 20.5) */
  headers: string[] | string
}

/** What the channel handlers keep of an outgoing call: references, formatted only when the profile is built. */
class HttpCall {
  status: number | undefined
  /** undici: a flat list of Buffers; node:http: IncomingMessage's rawHeaders */
  responseHeaders: ReadonlyArray<Buffer | string> | undefined
  timedOut = false
  open: OpenSpan | undefined

  constructor (readonly undici: UndiciRequest | undefined, readonly node: ClientRequest | undefined) {}
}

/** The call each library request object stands for, while it runs. */
const calls = new WeakMap<object, HttpCall>()

function begin (request: object, call: HttpCall, method: string): void {
  const spans = currentSpans()
  if (spans === undefined) return
  call.open = spans.start(HTTP_CLIENT, method, call as unknown as Record<string, unknown>)
  calls.set(request, call)
}

const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])

/** fetch's `AbortSignal.timeout()`, undici's own deadlines, a socket's */
function isTimeout (error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const { name, code, cause } = error as { name?: unknown, code?: unknown, cause?: unknown }
  return name === 'TimeoutError' || (typeof code === 'string' && TIMEOUT_CODES.has(code)) || (cause !== undefined && cause !== error && isTimeout(cause))
}

function failed (request: object, error: unknown): void {
  const call = calls.get(request)
  if (call === undefined) return
  if (isTimeout(error)) call.timedOut = true
  call.open?.fail(error)
}

/**
 * The channels of outgoing HTTP: undici's (`fetch`), where the request object ties the events
 * together, and node:http's (`http.get`, and every client built on it), where the response's
 * end (or its cut) ends the call. A call whose response is not read to its end by the time the
 * response is sent shows as running.
 */
export const httpClientChannels: readonly ChannelSubscription[] = [
  {
    name: 'undici:request:create',
    handler: (message) => {
      const request = (message as { request: UndiciRequest }).request
      begin(request, new HttpCall(request, undefined), request.method)
    }
  },
  {
    name: 'undici:request:headers',
    handler: (message) => {
      const { request, response } = message as { request: object, response: { statusCode: number, headers: Buffer[] } }
      const call = calls.get(request)
      if (call === undefined) return
      call.status = response.statusCode
      call.responseHeaders = response.headers
    }
  },
  {
    name: 'undici:request:trailers',
    handler: (message) => { calls.get((message as { request: object }).request)?.open?.end() }
  },
  {
    name: 'undici:request:error',
    handler: (message) => {
      const { request, error } = message as { request: object, error: unknown }
      failed(request, error)
    }
  },
  {
    name: 'http.client.request.start',
    handler: (message) => {
      const request = (message as { request: ClientRequest }).request
      const call = new HttpCall(undefined, request)
      begin(request, call, request.method)
      // node:http only says so by this event; the app then ends the request its own way
      if (call.open !== undefined) request.once('timeout', () => { call.timedOut = true })
    }
  },
  {
    name: 'http.client.response.finish',
    handler: (message) => {
      const { request, response } = message as { request: object, response: IncomingMessage }
      const call = calls.get(request)
      if (call === undefined) return
      call.status = response.statusCode
      call.responseHeaders = response.rawHeaders
      // published once the headers are in: the call lasts until the body is read (or cut off)
      response.once('close', () => {
        if (response.complete) call.open?.end()
        else call.open?.fail('the response was cut off before its end')
      })
    }
  },
  {
    name: 'http.client.request.error',
    handler: (message) => {
      const { request, error } = message as { request: object, error: unknown }
      failed(request, error)
    }
  }
]

/** The data of an `http_client` span, as profiles store it. */
export interface HttpClientSpanData {
  method: string
  /** absolute, user-info and secret query values masked */
  url: string
  status?: number
  requestHeaders?: Array<[string, string]>
  responseHeaders?: Array<[string, string]>
  timedOut?: true
}

const MAX_URL = 2048
const MAX_NAME = 200

function pairs (flat: ReadonlyArray<Buffer | string>): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([String(flat[i]), String(flat[i + 1])])
  return out
}

function undiciHeaders (headers: string[] | string): Array<[string, string]> {
  if (Array.isArray(headers)) return pairs(headers)
  return headers.split('\r\n').filter((line) => line !== '').map((line) => {
    const colon = line.indexOf(':')
    return [line.slice(0, colon).trim(), line.slice(colon + 1).trim()]
  })
}

function nodeHeaders (request: ClientRequest): Array<[string, string]> {
  return Object.entries(request.getHeaders()).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value)])
}

/** Raw call → the span's data: the URL and headers masked by the redaction policy. */
export function formatHttpClientSpan (span: Span, redactor: Redactor): void {
  const call = span.data as unknown
  if (!(call instanceof HttpCall)) return
  let method: string
  let url: string
  let requestHeaders: Array<[string, string]>
  if (call.undici !== undefined) {
    const { origin, path, headers } = call.undici
    method = call.undici.method
    url = String(origin).replace(/\/$/, '') + path
    requestHeaders = undiciHeaders(headers)
  } else {
    const request = call.node!
    method = request.method
    const host = request.getHeader('host') ?? request.host
    url = `${request.protocol}//${String(host)}${request.path}`
    requestHeaders = nodeHeaders(request)
  }
  const masked = truncate(redactor.url(url), MAX_URL)
  const data: HttpClientSpanData = { method, url: masked, requestHeaders: redactor.headers(requestHeaders) }
  if (call.status !== undefined) data.status = call.status
  if (call.responseHeaders !== undefined) data.responseHeaders = redactor.headers(pairs(call.responseHeaders))
  if (call.timedOut) data.timedOut = true
  span.name = truncate(`${method} ${masked}`, MAX_NAME)
  span.data = data as unknown as Record<string, unknown>
}
