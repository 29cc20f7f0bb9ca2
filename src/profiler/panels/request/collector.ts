import { fastifyCookie } from '@fastify/cookie'
import type { Collector, ProfileSummary, RequestSnapshot } from '../../../kernel/collector.js'
import type { KernelContext } from '../../../kernel/context.js'
import type { Redactor } from '../../../http/redact.js'
import { REDACTED, truncate } from '../../../http/redact.js'
import { headerText } from '../../../http/encoding.js'
import { statusText } from '../../../errors/flatten.js'
import { recordingOf, PROFILER_PATH } from '../../recording.js'
import { statusKind } from '../../pages/status.js'
import type { RedirectOrigin } from '../../redirect-cookie.js'

export type HeaderList = Array<[string, string]>

export interface ResponseData {
  statusCode: number
  statusText: string
  headers: HeaderList
  contentType: string | null
  /** bytes of the body, when known (null for streams) */
  size: number | null
}

/** The request panel's data: the request as sent, and the response (null when the client left first). */
export interface RequestData {
  method: string
  url: string
  path: string
  query: unknown
  protocol: string
  httpVersion: string
  ip: string
  headers: HeaderList
  cookies: HeaderList
  body: { contentType: string | null, length: number | null, content: unknown } | null
  attributes: Array<[string, string]>
  route: string | null
  /** Symfony's `_controller` */
  controller: string | null
  response: ResponseData | null
  /** the redirect the browser followed to this request, and its profile (Symfony's `sf_redirect`) */
  redirect?: RedirectOrigin
}

declare module '../../../kernel/collector.js' {
  interface CollectedData {
    request: RequestData
  }
}

const MAX_HEADERS = 200
const MAX_URL = 8192

/** The request as sent, with each header once per line (raw order). */
function rawHeaders (request: RequestSnapshot): Array<[string, string]> {
  const raw = request.rawHeaders
  const pairs: Array<[string, string]> = []
  for (let i = 0; i + 1 < raw.length && pairs.length < MAX_HEADERS; i += 2) pairs.push([raw[i], headerText(raw[i + 1]) ?? ''])
  return pairs
}

function cookies (request: RequestSnapshot, redactor: Redactor): Array<[string, string]> {
  const header = request.headers.cookie
  if (typeof header !== 'string' || header === '') return []
  let parsed: Record<string, string | undefined>
  try { parsed = fastifyCookie.parse(header) } catch { return [] }
  // cookie values are credentials more often than not (session ids): only names matching
  // nothing secret keep their value
  return Object.entries(parsed).slice(0, MAX_HEADERS).map(([name, value]) => [name, redactor.isSecret(name) || /sess|sid|auth|remember/i.test(name) ? REDACTED : truncate(value ?? '')])
}

function body (request: RequestSnapshot, redactor: Redactor): RequestData['body'] {
  const contentType = request.headers['content-type'] ?? null
  const lengthHeader = request.headers['content-length']
  const length = lengthHeader === undefined ? null : Number(lengthHeader)
  if (contentType === null && (length === null || length === 0) && request.body === undefined) return null
  const content = request.body === undefined || request.body === null
    ? null
    : typeof request.body === 'string' ? redactor.text(request.body) : redactor.value(request.body)
  return { contentType, length: Number.isFinite(length) ? length : null, content }
}

/** The response: status, headers (Set-Cookie masked), content type, size; null on a client abort. */
function response (sent: RequestSnapshot['response'], size: number | null, redactor: Redactor): ResponseData | null {
  // on a client abort no response was sent
  if (sent === null) return null
  const headers: Array<[string, string]> = []
  for (const [name, value] of Object.entries(sent.headers)) {
    if (value === undefined) continue
    for (const item of Array.isArray(value) ? value : [value]) headers.push([name, String(item)])
  }
  const contentType = sent.headers['content-type']
  const lengthHeader = sent.headers['content-length']
  const length = Number(lengthHeader)
  return {
    statusCode: sent.statusCode,
    statusText: statusText(sent.statusCode),
    headers: redactor.headers(headers),
    contentType: contentType === undefined ? null : String(contentType),
    size: Number.isFinite(length) && lengthHeader !== undefined ? length : size
  }
}

/** Method, URL, route, query, headers, cookies, body summary, client IP; and the response. */
export function collectRequest (request: RequestSnapshot, context: KernelContext, redactor: Redactor): RequestData {
  const uri = context.uri
  const url = context.requestUrl(request.url)
  const attributes: Array<[string, string]> = []
  for (const [name, value] of Object.entries(context.attributes)) {
    if (value === undefined) continue
    attributes.push([name, truncate(typeof value === 'string' ? value : JSON.stringify(redactor.value(value)) ?? String(value))])
  }
  return {
    method: request.method,
    url: truncate(redactor.url(url), MAX_URL),
    path: truncate(uri?.path ?? request.url.split('?')[0], MAX_URL),
    query: redactor.value(request.query ?? {}),
    protocol: request.protocol,
    httpVersion: request.httpVersion,
    ip: request.ip ?? '',
    headers: redactor.headers(rawHeaders(request)),
    cookies: cookies(request, redactor),
    body: body(request, redactor),
    attributes,
    route: typeof context.attributes._route === 'string' ? context.attributes._route : null,
    controller: typeof context.attributes._controller === 'string' ? context.attributes._controller : null,
    response: response(request.response, recordingOf(context)?.size ?? null, redactor),
    ...(recordingOf(context)?.redirect === undefined ? {} : { redirect: recordingOf(context)!.redirect })
  }
}

/** "POST @route_name" (or the method alone without a route), as Symfony names a redirect's origin. */
export function redirectText (redirect: RedirectOrigin): string {
  return redirect.route === null ? redirect.method : `${redirect.method} @${redirect.route}`
}

function text (value: unknown): string {
  if (typeof value === 'string') return value
  if (value === null || value === undefined) return ''
  return JSON.stringify(value) ?? String(value)
}

function rows (value: unknown): Array<{ name: string, value: string }> {
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).map(([name, item]) => ({ name, value: text(item) }))
}

function pairs (list: HeaderList | null | undefined): Array<{ name: string, value: string }> {
  return (list ?? []).map(([name, value]) => ({ name, value }))
}

const pairList = { type: 'array', items: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 2 } }

/**
 * The request panel (Symfony's "Request / Response") and the toolbar's status item, followed by
 * the redirect the page came from, linking its profile (Symfony's "Redirect from POST @route (token)").
 */
export const requestCollector: Collector<RequestData> = {
  name: 'request',
  label: 'Request / Response',
  order: 10,
  deferred: true,
  template: 'profiler/collectors/request.hbs',
  masked: true,
  schema: {
    type: 'object',
    required: ['method', 'url', 'path', 'protocol', 'httpVersion', 'ip', 'headers', 'cookies', 'attributes'],
    properties: {
      method: { type: 'string' },
      url: { type: 'string' },
      path: { type: 'string' },
      protocol: { type: 'string' },
      httpVersion: { type: 'string' },
      ip: { type: 'string' },
      headers: pairList,
      cookies: pairList,
      attributes: pairList,
      route: { type: ['string', 'null'] },
      controller: { type: ['string', 'null'] },
      body: { anyOf: [{ type: 'null' }, { type: 'object' }] },
      response: {
        anyOf: [{ type: 'null' }, {
          type: 'object',
          required: ['statusCode', 'statusText', 'headers'],
          properties: { statusCode: { type: 'integer' }, statusText: { type: 'string' }, headers: pairList, contentType: { type: ['string', 'null'] }, size: { type: ['number', 'null'] } }
        }]
      }
    }
  },
  collect ({ request, context, redactor }) {
    return request === undefined ? undefined : collectRequest(request, context, redactor)
  },
  panel (data) {
    const locale = data.attributes.find(([name]) => name === '_locale')?.[1]
    const response = data.response ?? null
    return {
      summary: [
        { name: 'Method', value: data.method },
        { name: 'URL', value: data.url },
        { name: 'Path', value: data.path },
        { name: 'Route', value: data.route ?? '(none)' },
        ...(data.redirect === undefined ? [] : [{ name: 'Redirect from', value: `${data.redirect.statusCode} ${redirectText(data.redirect)} (${data.redirect.token})` }]),
        { name: 'Client IP', value: data.ip },
        { name: 'Protocol', value: `${data.protocol.toUpperCase()} / HTTP ${data.httpVersion}` },
        ...(locale !== undefined ? [{ name: 'Locale', value: locale }] : [])
      ],
      query: rows(data.query),
      attributes: pairs(data.attributes),
      headers: pairs(data.headers),
      cookies: pairs(data.cookies),
      body: data.body === null || data.body === undefined
        ? null
        : { contentType: data.body.contentType ?? '(none)', length: data.body.length ?? '(unknown)', content: typeof data.body.content === 'string' ? data.body.content : data.body.content === null || data.body.content === undefined ? '' : JSON.stringify(data.body.content, null, 2) },
      response: response === null
        ? null
        : {
            statusCode: response.statusCode,
            statusText: response.statusText,
            contentType: response.contentType ?? '(none)',
            size: response.size === null || response.size === undefined ? '(streamed)' : `${response.size} bytes`,
            headers: pairs(response.headers)
          }
    }
  },
  toolbar (data, profile: ProfileSummary) {
    return {
      statusText: profile.statusCode === 0 ? 'aborted' : String(profile.statusCode),
      statusKind: statusKind(profile.statusCode),
      method: profile.method,
      url: profile.url,
      route: data?.route ?? null,
      controller: data?.controller ?? null,
      token: profile.token,
      link: `${PROFILER_PATH}/${profile.token}?panel=request`,
      redirect: data?.redirect === undefined
        ? undefined
        : { statusCode: data.redirect.statusCode, text: redirectText(data.redirect), token: data.redirect.token, href: `${PROFILER_PATH}/${data.redirect.token}` }
    }
  }
}
