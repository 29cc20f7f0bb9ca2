import type { ClientRequest, IncomingMessage } from 'node:http'
import type { Redactor } from '../../../http/redact.js'
import { truncate } from '../../../http/redact.js'
import { currentSpans } from '../../spans.js'
import type { OpenSpan, Span, SpanList } from '../../spans.js'
import { CapturedStack, OriginCapture } from '../../origin.js'
import { BodyTee, MAX_BODIES, headerOf, isTextType, shownBody } from './http-body.js'
import type { BodyBudget, ShownBody } from './http-body.js'
import { curlCommand } from './curl.js'
import type { ChannelSubscription } from '../../instrument/channels.js'

export const HTTP_CLIENT = 'http_client'

/** What undici publishes of a request (`undici:request:create`): Node's own `fetch` and the undici package. */
interface UndiciRequest {
  origin: string | URL
  path: string
  method: string
  /** a flat list of names and values (undici 6), or `name: value\r\n` lines (undici 5, Node 20.0 to 20.5) */
  headers: string[] | string
  /** what is sent: a stream for fetch (even of a string), a Buffer or string for undici's own API */
  body?: unknown
}

/** What the channel handlers keep of an outgoing call: references, formatted only when the profile is built. */
class HttpCall {
  status: number | undefined
  /** undici: a flat list of Buffers; node:http: IncomingMessage's rawHeaders */
  responseHeaders: ReadonlyArray<Buffer | string> | undefined
  timedOut = false
  open: OpenSpan | undefined
  /** the bodies' first bytes, when they are text (see http-body.ts) */
  requestBody: BodyTee | undefined
  responseBody: BodyTee | undefined
  /** what is left of the unit's budget for bodies */
  budget: BodyBudget | undefined

  /** the request as sent, told when the unit ended (the library's request object is not kept) */
  sent: { method: string, url: string, headers: Array<[string, string]> } | undefined

  constructor (public undici: UndiciRequest | undefined, public node: ClientRequest | undefined) {}
}

/** The request a call sent: method, URL, headers, as sent (unmasked). */
function sentRequest (call: HttpCall): NonNullable<HttpCall['sent']> {
  if (call.sent !== undefined) return call.sent
  if (call.undici !== undefined) {
    const { origin, path, headers, method } = call.undici
    return { method, url: String(origin).replace(/\/$/, '') + path, headers: undiciHeaders(headers) }
  }
  const request = call.node!
  const host = request.getHeader('host') ?? request.host
  return { method: request.method, url: `${request.protocol}//${String(host)}${request.path}`, headers: nodeHeaders(request) }
}

/** Once the unit ended: what the call sent, as plain values; not the library's request object (its socket, its agent). */
export function settleHttpClientSpan (span: Span): void {
  const call = span.data as unknown
  if (!(call instanceof HttpCall) || call.sent !== undefined) return
  call.sent = sentRequest(call)
  call.undici = undefined
  call.node = undefined
}

/** The call each library request object stands for, while it runs. */
const calls = new WeakMap<object, HttpCall>()
/** each profiled unit's budget for the bodies of its calls */
const budgets = new WeakMap<SpanList, BodyBudget>()

function begin (request: object, call: HttpCall, method: string, origin: (spans: SpanList) => OriginCapture | CapturedStack | null): boolean {
  const spans = currentSpans()
  if (spans === undefined) return false
  call.open = spans.start(HTTP_CLIENT, method, call as unknown as Record<string, unknown>, undefined, spans.capturesOrigins ? origin(spans) : null)
  let budget = budgets.get(spans)
  if (budget === undefined) budgets.set(spans, budget = { left: MAX_BODIES })
  call.budget = budget
  calls.set(request, call)
  return true
}

type Tapped = (this: unknown, chunk: unknown, encoding?: unknown) => unknown

/**
 * Copies what a library method is given (a body's chunks) into `tee`, on this one object: an
 * own property over the prototype's method, for this request only. undici calls
 * `request.onBodySent(chunk)` for each chunk it writes and `request.onData(chunk)` (undici 8:
 * `onResponseData`) for each it receives (Node 20's and 22's undici 6 publishes no
 * `bodyChunkSent`/`bodyChunkReceived` channel);
 * node:http's parser `response.push(chunk)`.
 */
function tap (target: object, method: string, tee: BodyTee): void {
  const original = (target as Record<string, unknown>)[method]
  if (typeof original !== 'function') return
  // an own property over the prototype's (writable) method: this object only
  ;(target as Record<string, unknown>)[method] = function (this: unknown, chunk: unknown, encoding?: unknown): unknown {
    try {
      if (chunk !== null && chunk !== undefined) tee.add(chunk)
    } catch {
      // the body is simply not kept
    }
    return (original as Tapped).call(this, chunk, encoding)
  }
}

/** A header's value in a flat list of names and values (undici's, node:http's raw headers), without making pairs of the whole list. */
function flatHeaderOf (flat: ReadonlyArray<Buffer | string>, name: string): string | undefined {
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const key = flat[i]!
    if (key.length === name.length && String(key).toLowerCase() === name) return String(flat[i + 1])
  }
  return undefined
}

function undiciHeaderOf (headers: string[] | string, name: string): string | undefined {
  return Array.isArray(headers) ? flatHeaderOf(headers, name) : headerOf(undiciHeaders(headers), name)
}

/**
 * Where `fetch()` was called: undici publishes the request about 25 frames deep inside it, so
 * the stack is taken below the global `fetch` itself, a few frames. A call through the undici
 * package's own API (or a redirect, made on a later tick) has no global `fetch` on its stack:
 * then below the handler, deeper.
 */
function fetchCaller (subscriber: Function): CapturedStack | OriginCapture {
  const fetch = globalThis.fetch as unknown
  if (typeof fetch === 'function') {
    // below it: the app's frame, or a wrapper's (ky, ofetch) and then the app's
    if (fetchSite?.skip !== fetch) fetchSite = new OriginCapture(fetch, undefined, undefined, 1)
    const stack = CapturedStack.at(fetchSite)
    if (stack.frames().length > 0) return stack
  }
  if (undiciSite?.skip !== subscriber) undiciSite = new OriginCapture(subscriber)
  return undiciSite
}

let fetchSite: OriginCapture | undefined
let undiciSite: OriginCapture | undefined
let createdSite: OriginCapture | undefined

/**
 * node:http publishes `http.client.request.start` once the request is flushed, on a later tick,
 * with none of the app's frames on its stack. Node 22.12 and later also publish
 * `http.client.request.created` in the ClientRequest constructor, in the caller's stack: the
 * stack is taken there. (On Node 20 a node:http call has no origin.)
 */
const createdAt = new WeakMap<object, CapturedStack>()

function onRequestCreated (message: unknown, subscriber: Function): void {
  const spans = currentSpans()
  if (spans?.capturesOrigins !== true) return
  if (createdSite?.skip !== subscriber) createdSite = new OriginCapture(subscriber)
  createdAt.set((message as { request: object }).request, CapturedStack.at(createdSite))
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
    handler: (message, subscriber) => {
      const request = (message as { request: UndiciRequest }).request
      const call = new HttpCall(request, undefined)
      if (!begin(request, call, request.method, () => fetchCaller(subscriber))) return
      // a text body is copied as undici writes it (fetch hands undici a stream, even for a string)
      if (request.body !== null && request.body !== undefined && isTextType(undiciHeaderOf(request.headers, 'content-type'))) {
        call.requestBody = new BodyTee(call.budget!)
        tap(request, 'onBodySent', call.requestBody)
      }
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
      // published before the body's first byte: a text body is copied as it comes
      if (isTextType(flatHeaderOf(response.headers, 'content-type'))) {
        call.responseBody = new BodyTee(call.budget!)
        // undici 6 and 7 (Node 22, 24) name it onData, undici 8 (Node 26) onResponseData
        tap(request, typeof (request as { onData?: unknown }).onData === 'function' ? 'onData' : 'onResponseData', call.responseBody)
      }
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
  { name: 'http.client.request.created', handler: onRequestCreated },
  {
    name: 'http.client.request.start',
    handler: (message) => {
      const request = (message as { request: ClientRequest }).request
      const call = new HttpCall(undefined, request)
      begin(request, call, request.method, () => createdAt.get(request) ?? null)
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
      // published once the headers are parsed, before the body's first chunk
      if (isTextType(response.headers['content-type'])) {
        call.responseBody = new BodyTee(call.budget!)
        tap(response, 'push', call.responseBody)
      }
      // the call lasts until the body is read (or cut off)
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
  /** the bodies: text types only, the first 64 KiB, masked (see http-body.ts) */
  requestBody?: ShownBody
  responseBody?: ShownBody
  /** the call as a curl command: secrets masked, every argument shell-quoted */
  curl?: string
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
  const { method, url, headers: requestHeaders } = sentRequest(call)
  const masked = truncate(redactor.url(url), MAX_URL)
  const headers = redactor.headers(requestHeaders)
  const data: HttpClientSpanData = { method, url: masked, requestHeaders: headers }
  if (call.status !== undefined) data.status = call.status
  const responsePairs = call.responseHeaders === undefined ? undefined : pairs(call.responseHeaders)
  if (responsePairs !== undefined) data.responseHeaders = redactor.headers(responsePairs)
  if (call.timedOut) data.timedOut = true
  if (call.requestBody !== undefined) data.requestBody = shownBody(call.requestBody, headerOf(requestHeaders, 'content-type'), headerOf(requestHeaders, 'content-encoding'), redactor)
  // a response whose body is still being read when the profile is built: what came so far
  if (call.responseBody !== undefined && responsePairs !== undefined) data.responseBody = shownBody(call.responseBody, headerOf(responsePairs, 'content-type'), headerOf(responsePairs, 'content-encoding'), redactor)
  const sent = data.requestBody?.text
  data.curl = curlCommand(method, masked, headers, sent === undefined || data.requestBody?.cut === true ? undefined : sent)
  span.name = truncate(`${method} ${masked}`, MAX_NAME)
  span.data = data as unknown as Record<string, unknown>
}
