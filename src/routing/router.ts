/**
 * What the router answers for a request no route serves, with Symfony's exact messages: the
 * request's URI as Symfony computes it, the trailing-slash redirect, the 404 and the 405 with
 * their causes. No Fastify here: the router listener (kernel.request) and the not-found handler
 * call it.
 */
import type { KernelResponse } from '../http/response.js'
import { headerText } from '../http/encoding.js'
import {
  BadRequestHttpException,
  MethodNotAllowedException,
  MethodNotAllowedHttpException,
  NotFoundHttpException,
  ResourceNotFoundException,
  SuspiciousOperationException
} from '../errors/exceptions.js'
import { sharedFrames, skipCapture, stackless, withFramesOf } from '../errors/stackless.js'
import type { RaiseSite } from '../errors/stackless.js'
import type { HttpException } from '../errors/exceptions.js'
import { originOf, parseHttpHost, requestScheme, splitRequestTarget } from './request-uri.js'
import type { RequestUri } from './request-uri.js'
import { routingPath } from './routing-path.js'
import type { TrustedHosts } from './trusted-hosts.js'
import { matchMiss } from './matcher.js'
import type { RoutingOutcome } from './matcher.js'
import type { RouteTable } from './route-table.js'
import { permanentRedirect, redirectLocation } from './redirect.js'

/** What the router reads of a request (a FastifyRequest has it). */
export interface RoutedRequest {
  method: string
  /** the URL the router matched (after `rewriteUrl`) */
  url: string
  /** the URL as sent */
  originalUrl?: string
  raw: { url?: string }
  protocol?: string
  host?: string
  headers: { referer?: string | string[] }
}

/**
 * Scheme, host and raw path of the request, as Symfony's Request computes them. A Host that is
 * not a host name, or one `trustedHosts` does not match, gives the 400 to answer (the URI then
 * names `localhost`, so that nothing builds a URL from that host).
 */
export function resolveRequestUri (request: RoutedRequest, trustedHosts?: TrustedHosts): { uri: RequestUri, invalidHost?: HttpException } {
  const { path, query } = splitRequestTarget(request.originalUrl ?? request.raw.url ?? '/')
  const routedPath = routingPath(request.url === request.originalUrl ? path : splitRequestTarget(request.url).path)
  const scheme = requestScheme(request.protocol)
  try {
    const host = parseHttpHost(request.host, scheme)
    trustedHosts?.check(host.host)
    return { uri: { scheme, httpHost: host.httpHost, path, query, routedPath } }
  } catch (error) {
    if (!(error instanceof SuspiciousOperationException)) throw error
    return { uri: { scheme, httpHost: 'localhost', path, query, routedPath }, invalidHost: new BadRequestHttpException(error.message, error) }
  }
}

/**
 * Frames a debug page shows of a routing miss: the one where the router raises it. The frames
 * below it are only ever the kernel's stages and Fastify (vendor frames the page folds away),
 * and capturing, formatting and showing each costs a debug 404 some 8 µs.
 */
const ROUTING_MISS_FRAMES = 1
/** The frame of each kind of miss, the same for every miss: captured once, then shared. */
const NOT_FOUND_SITE: RaiseSite = {}
const METHOD_NOT_ALLOWED_SITE: RaiseSite = {}

/** The router's decision for a request no route serves, and the answer: a redirect, or the 404 / 405. */
export interface RoutingFailure {
  outcome: RoutingOutcome
  answer: KernelResponse | HttpException
}

/**
 * The answer to a request no route serves: a trailing-slash redirect, or the 404 / 405
 * exception with Symfony's exact message and cause, returned (not thrown: see `KernelEvent.fail`).
 */
export function routingFailure (table: RouteTable, request: RoutedRequest, uri: RequestUri, withStack = true): RoutingFailure {
  // A routing miss is an expected outcome whose stack only ever points into the kernel and
  // Fastify: where no page shows it (production), none is captured, it would be most of a
  // 404's cost; debug pages show the one frame where the router raises it.
  if (!withStack) return routingAnswer(table, request, uri, false)
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = Math.min(limit, ROUTING_MISS_FRAMES)
  try {
    return routingAnswer(table, request, uri, true)
  } finally {
    Error.stackTraceLimit = limit
  }
}

function routingAnswer (table: RouteTable, request: RoutedRequest, uri: RequestUri, withStack: boolean): RoutingFailure {
  const outcome = matchMiss(table, request.method, uri.path, uri.routedPath)
  const url = originOf(uri) + uri.path
  switch (outcome.kind) {
    case 'redirect':
      return { outcome, answer: permanentRedirect(redirectLocation(uri, outcome.path)) }
    case 'method-not-allowed': {
      const message = `No route found for "${request.method} ${url}": Method Not Allowed (Allow: ${outcome.allow.join(', ')})`
      // one stack is captured, the outer one's; the cause shows the same frames
      if (withStack) {
        const cause = stackless(MethodNotAllowedException, { message: '', allowedMethods: outcome.allow })
        const limit = skipCapture(METHOD_NOT_ALLOWED_SITE)
        const error = sharedFrames(METHOD_NOT_ALLOWED_SITE, new MethodNotAllowedHttpException(outcome.allow, message, cause), limit)
        withFramesOf(cause, error)
        return { outcome, answer: error }
      }
      return {
        outcome,
        answer: stackless(MethodNotAllowedHttpException, {
          message,
          statusCode: 405,
          headers: { Allow: outcome.allow.join(', ') },
          allowedMethods: outcome.allow,
          cause: stackless(MethodNotAllowedException, { message: '', allowedMethods: outcome.allow })
        })
      }
    }
    case 'not-found':
      return { outcome, answer: routeNotFound(request, url, outcome.attemptedPath, withStack, NOT_FOUND_SITE) }
  }
}

/**
 * Symfony's 404 for a request no route serves (`url`: scheme, host and raw path), `attemptedPath`
 * being the last path the matcher tried. Also raised after matching by listeners that act as
 * requirements (`_locale`). `site`: raised where the frames are always the same (the router's miss).
 */
export function routeNotFound (request: Pick<RoutedRequest, 'method' | 'headers'>, url: string, attemptedPath: string, withStack = true, site: RaiseSite = {}): NotFoundHttpException {
  const referer = headerText(request.headers.referer)
  // PHP truthiness, as in Symfony's RouterListener: "" and "0" add no suffix
  const from = referer !== undefined && referer !== '' && referer !== '0' ? ` (from "${referer}")` : ''
  const message = `No route found for "${request.method} ${url}"${from}`
  const cause = `No routes found for "${attemptedPath}".`
  // one stack is captured, the outer one's; the cause shows the same frames
  if (withStack) {
    const resourceNotFound = stackless(ResourceNotFoundException, { message: cause })
    const limit = skipCapture(site)
    const error = sharedFrames(site, new NotFoundHttpException(message, resourceNotFound), limit)
    withFramesOf(resourceNotFound, error)
    return error
  }
  return stackless(NotFoundHttpException, { message, statusCode: 404, headers: {}, cause: stackless(ResourceNotFoundException, { message: cause }) })
}
