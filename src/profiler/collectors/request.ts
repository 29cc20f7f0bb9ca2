import type { FastifyRequest } from 'fastify'
import { fastifyCookie } from '@fastify/cookie'
import type { KernelContext } from '../../kernel/context.js'
import type { RequestData } from '../profile.js'
import type { Redactor } from '../../http/redact.js'
import { REDACTED, truncate } from '../../http/redact.js'
import { headerText } from '../../http/encoding.js'
import { requestScheme } from '../../routing/request-uri.js'

const MAX_HEADERS = 200
const MAX_URL = 8192

/** The request as sent, with each header once per line (raw order), secrets masked. */
function rawHeaders (request: FastifyRequest): Array<[string, string]> {
  const raw = request.raw.rawHeaders
  const pairs: Array<[string, string]> = []
  for (let i = 0; i + 1 < raw.length && pairs.length < MAX_HEADERS; i += 2) pairs.push([raw[i], headerText(raw[i + 1]) ?? ''])
  return pairs
}

function cookies (request: FastifyRequest, redactor: Redactor): Array<[string, string]> {
  const header = request.headers.cookie
  if (typeof header !== 'string' || header === '') return []
  let parsed: Record<string, string | undefined>
  try { parsed = fastifyCookie.parse(header) } catch { return [] }
  // cookie values are credentials more often than not (session ids): only names matching
  // nothing secret keep their value
  return Object.entries(parsed).slice(0, MAX_HEADERS).map(([name, value]) => [name, redactor.isSecret(name) || /sess|sid|auth|remember/i.test(name) ? REDACTED : truncate(value ?? '')])
}

function body (request: FastifyRequest, redactor: Redactor): RequestData['body'] {
  const contentType = request.headers['content-type'] ?? null
  const lengthHeader = request.headers['content-length']
  const length = lengthHeader === undefined ? null : Number(lengthHeader)
  if (contentType === null && (length === null || length === 0) && request.body === undefined) return null
  const content = request.body === undefined || request.body === null
    ? null
    : typeof request.body === 'string' ? redactor.text(request.body) : redactor.value(request.body)
  return { contentType, length: Number.isFinite(length) ? length : null, content }
}

/** The request collector: method, URL, route, query, headers, cookies, body summary, client IP. */
export function collectRequest (request: FastifyRequest, context: KernelContext, redactor: Redactor): RequestData {
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
    protocol: uri?.scheme ?? requestScheme(request.protocol),
    httpVersion: request.raw.httpVersion,
    ip: request.ip ?? '',
    headers: redactor.headers(rawHeaders(request)),
    cookies: cookies(request, redactor),
    body: body(request, redactor),
    attributes,
    route: typeof context.attributes._route === 'string' ? context.attributes._route : null
  }
}
