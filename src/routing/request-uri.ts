import { SuspiciousOperationException } from '../errors/exceptions.js'

/** The request target split as Symfony sees it: the raw path (never decoded) and the raw query. */
export interface RequestTarget {
  path: string
  query: string
}

export interface RequestUri {
  /** `http` or `https`, never anything else a header said */
  scheme: string
  /** host, with the port when it is not the scheme's default */
  httpHost: string
  /** the raw path, never decoded */
  path: string
  /** the raw query string, without `?` */
  query: string
  /**
   * the path Fastify's router matched: the raw path in the form Symfony's matcher sees it
   * (`%2F` decoded, undecodable escapes kept as text, see `kernelServerOptions()`)
   */
  routedPath: string
}

/**
 * `scheme://host[:port]`: the one place an absolute URL of the application starts from
 * (routing messages, redirects, the profile link, login redirects). Symfony's
 * `getSchemeAndHttpHost()`: the scheme is only ever http or https, the host passed the
 * Host checks (valid, trusted).
 */
export function originOf (uri: RequestUri): string {
  return `${uri.scheme}://${uri.httpHost}`
}

const ABSOLUTE_FORM = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//

/**
 * Splits a raw request target. An absolute-form target (`http://other/x?y`) contributes only
 * its path; the fragment is dropped; a target without a leading slash gets one.
 */
export function splitRequestTarget (target: string): RequestTarget {
  let rest = target
  const scheme = ABSOLUTE_FORM.exec(rest)
  if (scheme !== null) {
    const pathStart = rest.indexOf('/', scheme[0].length)
    rest = pathStart === -1 ? '/' : rest.slice(pathStart)
  }
  const hash = rest.indexOf('#')
  if (hash !== -1) rest = rest.slice(0, hash)
  const mark = rest.indexOf('?')
  const path = mark === -1 ? rest : rest.slice(0, mark)
  const query = mark === -1 ? '' : rest.slice(mark + 1)
  return { path: path.startsWith('/') ? path : '/' + path, query }
}

const SECURE_PROTOCOLS = new Set(['https', 'on', 'ssl', '1'])

/**
 * The request's scheme by Symfony's `Request::isSecure()`: `https` when the protocol (the
 * socket's, or a trusted proxy's `X-Forwarded-Proto`, as Fastify reads it) says https
 * (`https`, `on`, `ssl` or `1`, any case), otherwise `http`. Whatever else a proxy header
 * holds (`javascript:alert(1)//`) never becomes part of a URL.
 */
export function requestScheme (protocol: string | undefined): 'http' | 'https' {
  return protocol !== undefined && (protocol === 'https' || SECURE_PROTOCOLS.has(protocol.trim().toLowerCase())) ? 'https' : 'http'
}

export interface HttpHost {
  /** lower-cased host name, without port */
  host: string
  port: number
  /** `host` or `host:port` when the port is not the scheme's default */
  httpHost: string
}

const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443 }
const PORT_SUFFIX = /:\d+$/
const HOST_RUNS = /(?:^\[)?[a-zA-Z0-9:\]_-]+\.?/g

// most requests repeat the previous Host: the last valid answer is kept (invalid ones throw)
let last: { header: string | undefined, scheme: string, fallbackHost: string, result: HttpHost } | undefined

// the last Host header found valid by `isValidHost`
let lastValid: string | undefined

/**
 * The Host header is a host name by Symfony's rules (what `parseHttpHost` refuses, refused
 * here without its error): the check a matched route needs when kernel.request does not run.
 */
export function isValidHost (hostHeader: string | undefined): boolean {
  if (hostHeader === lastValid) return true
  const host = (hostHeader ?? '').trim().replace(PORT_SUFFIX, '').toLowerCase()
  if (host !== '' && host.replace(HOST_RUNS, '') !== '') return false
  lastValid = hostHeader
  return true
}

/**
 * Host and port from the Host header, by Symfony's rules: lower-cased, the port kept only when
 * it is not the scheme's default, and anything that is not a host name rejected.
 */
export function parseHttpHost (hostHeader: string | undefined, scheme: string, fallbackHost = 'localhost'): HttpHost {
  if (last !== undefined && last.header === hostHeader && last.scheme === scheme && last.fallbackHost === fallbackHost) return last.result
  const result = parseUncached(hostHeader, scheme, fallbackHost)
  last = { header: hostHeader, scheme, fallbackHost, result }
  return result
}

function parseUncached (hostHeader: string | undefined, scheme: string, fallbackHost: string): HttpHost {
  const raw = (hostHeader ?? '').trim()
  const host = raw === '' ? fallbackHost : raw.replace(PORT_SUFFIX, '').toLowerCase()
  // replace, not test: a single pass over the value, whatever its length
  if (host !== '' && host.replace(HOST_RUNS, '') !== '') {
    throw new SuspiciousOperationException(`Invalid Host "${host}".`)
  }
  const defaultPort = DEFAULT_PORTS[scheme] ?? 80
  let port = defaultPort
  if (raw !== '') {
    const colon = raw.startsWith('[') ? raw.indexOf(':', raw.lastIndexOf(']')) : raw.lastIndexOf(':')
    const portText = colon === -1 ? '' : raw.slice(colon + 1)
    // PHP truthiness, as in Symfony's getPort(): "" and "0" mean the scheme's default port
    if (portText !== '' && portText !== '0') port = Number.parseInt(portText, 10) || 0
  }
  return { host, port, httpHost: port === defaultPort ? host : `${host}:${port}` }
}
