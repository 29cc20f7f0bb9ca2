import type { FastifyRequest } from 'fastify'
import type { RequestEvent, KernelResponse } from '../events.js'
import type { KernelContext } from '../context.js'
import type { RouteDefinition, RouteTable } from '../../routing/route-table.js'
import { matchMiss } from '../../routing/matcher.js'
import { parseHttpHost, requestScheme, splitRequestTarget } from '../../routing/request-uri.js'
import { routingPath } from '../../routing/routing-path.js'
import { emptyParameter } from '../../routing/route-pattern.js'
import type { TrustedHosts } from '../../routing/trusted-hosts.js'
import { permanentRedirect, redirectLocation } from '../../routing/redirect.js'
import {
  BadRequestHttpException,
  HttpException,
  MethodNotAllowedException,
  MethodNotAllowedHttpException,
  NotFoundHttpException,
  ResourceNotFoundException,
  SuspiciousOperationException,
  stackless,
  withFramesOf
} from '../../errors/http-exceptions.js'
import { headerText } from '../../http/encoding.js'
import { kKernelNotFound, kKernelRoute } from '../../symbols.js'

type StampedConfig = { [kKernelRoute]?: RouteDefinition, [kKernelNotFound]?: boolean } | undefined

/**
 * Scheme, host and raw path of the request, as Symfony's Request computes them: a Host that is
 * not a host name, or one `trustedHosts` does not match, is a 400.
 */
export function resolveRequestUri (request: FastifyRequest, context: KernelContext, trustedHosts?: TrustedHosts): void {
  const { path, query } = splitRequestTarget(request.originalUrl ?? request.raw.url ?? '/')
  const routedPath = routingPath(request.url === request.originalUrl ? path : splitRequestTarget(request.url).path)
  const scheme = requestScheme(request.protocol)
  try {
    const host = parseHttpHost(request.host, scheme)
    trustedHosts?.check(host.host)
    context.uri = { scheme, httpHost: host.httpHost, path, query, routedPath }
  } catch (error) {
    context.uri = { scheme, httpHost: 'localhost', path, query, routedPath }
    if (error instanceof SuspiciousOperationException) throw new BadRequestHttpException(error.message, error)
    throw error
  }
}

/**
 * Frames a debug page shows of a routing miss: the one where the router raises it. The frames
 * below it are only ever the kernel's stages and Fastify (vendor frames the page folds away),
 * and capturing, formatting and showing each costs a debug 404 some 8 µs.
 */
const ROUTING_MISS_FRAMES = 1

/**
 * The answer to a request no route serves: a trailing-slash redirect, or the 404 / 405
 * exception with Symfony's exact message and cause, returned (not thrown: see `KernelEvent.fail`).
 */
export function routingFailure (table: RouteTable, request: FastifyRequest, context: KernelContext, withStack = true): KernelResponse | HttpException {
  // A routing miss is an expected outcome whose stack only ever points into the kernel and
  // Fastify: where no page shows it (production), none is captured, it would be most of a
  // 404's cost; debug pages show V8's default 10 frames of it, not the whole stacks other errors get.
  if (!withStack) return routingAnswer(table, request, context, false)
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = Math.min(limit, ROUTING_MISS_FRAMES)
  try {
    return routingAnswer(table, request, context, true)
  } finally {
    Error.stackTraceLimit = limit
  }
}

function routingAnswer (table: RouteTable, request: FastifyRequest, context: KernelContext, withStack: boolean): KernelResponse | HttpException {
  if (context.uri === undefined) resolveRequestUri(request, context)
  const uri = context.uri!
  const outcome = matchMiss(table, request.method, uri.path, uri.routedPath)
  context.routing = outcome
  const url = context.absoluteUrl()
  switch (outcome.kind) {
    case 'redirect':
      return permanentRedirect(redirectLocation(uri, outcome.path))
    case 'method-not-allowed': {
      const message = `No route found for "${request.method} ${url}": Method Not Allowed (Allow: ${outcome.allow.join(', ')})`
      // one stack is captured, the outer one's; the cause shows the same frames
      if (withStack) {
        const cause = stackless(MethodNotAllowedException, { message: '', allowedMethods: outcome.allow })
        const error = new MethodNotAllowedHttpException(outcome.allow, message, cause)
        withFramesOf(cause, error)
        return error
      }
      return stackless(MethodNotAllowedHttpException, {
        message,
        statusCode: 405,
        headers: { Allow: outcome.allow.join(', ') },
        allowedMethods: outcome.allow,
        cause: stackless(MethodNotAllowedException, { message: '', allowedMethods: outcome.allow })
      })
    }
    case 'not-found':
      return routeNotFound(request, context, outcome.attemptedPath, withStack)
  }
}

/**
 * Symfony's 404 for a request no route serves, `attemptedPath` being the last path the matcher
 * tried. Also raised after matching by listeners that act as requirements (`_locale`).
 */
export function routeNotFound (request: FastifyRequest, context: KernelContext, attemptedPath: string, withStack = true): NotFoundHttpException {
  const referer = headerText(request.headers.referer)
  // PHP truthiness, as in Symfony's RouterListener: "" and "0" add no suffix
  const from = referer !== undefined && referer !== '' && referer !== '0' ? ` (from "${referer}")` : ''
  const message = `No route found for "${request.method} ${context.absoluteUrl()}"${from}`
  const cause = `No routes found for "${attemptedPath}".`
  // one stack is captured, the outer one's; the cause shows the same frames
  if (withStack) {
    const resourceNotFound = stackless(ResourceNotFoundException, { message: cause })
    const error = new NotFoundHttpException(message, resourceNotFound)
    withFramesOf(resourceNotFound, error)
    return error
  }
  return stackless(NotFoundHttpException, { message, statusCode: 404, headers: {}, cause: stackless(ResourceNotFoundException, { message: cause }) })
}

/** A readable name of a route handler: Symfony's `_controller`. */
export function controllerName (handler: unknown): string {
  // Fastify binds handlers to their instance: `bound home` is `home`
  const name = typeof handler === 'function' ? handler.name.replace(/^bound /, '') : ''
  return name === '' ? 'anonymous' : name
}

/**
 * The definition of the route a request matched. Routes added after the kernel were stamped by
 * its onRoute hook; one registered before it is learnt here, at its first request (its config
 * object is the route's own, so the stamp stays).
 */
function matchedRoute (table: RouteTable, options: FastifyRequest['routeOptions']): RouteDefinition {
  const config = options.config as unknown as StampedConfig & Record<string, unknown>
  const stamped = config?.[kKernelRoute]
  if (stamped !== undefined) return stamped
  const learnt = adoptRoute(table, { method: options.method ?? 'GET', url: options.url ?? '', config, handler: options.handler })
  if (config !== undefined && config !== null) (config as Record<symbol, unknown>)[kKernelRoute] = learnt
  return learnt
}

/**
 * Teaches the route table a route registered before the kernel (at its first request, or all at
 * once by the routing console): name and `catchAll` from its config, controller from its handler.
 */
export function adoptRoute (table: RouteTable, route: { method: string | string[], url: string, config: unknown, handler: unknown }): RouteDefinition {
  const config = route.config as Record<string, unknown> | null | undefined
  const name = typeof config?.name === 'string' ? config.name : undefined
  const controller = controllerName(route.handler)
  return table.adopt(route.method, route.url, name, controller, config?.catchAll === true ? true : undefined) ??
    // an explicit HEAD route, or the HEAD twin of a GET route not learnt yet
    table.definitionOf('GET', route.url) ??
    { index: -1, name: name ?? `head_${route.url}`, methods: ['HEAD'], url: route.url, controller, catchAll: false }
}

/**
 * The router listener of kernel.request (priority 32). Fastify has already matched the route;
 * this records the match as request attributes. A miss fails the stage here, as Symfony's
 * RouterListener throws, so later request listeners (locale, firewall) and any controller never
 * run; the not-found handler then answers it (`context.routingError`).
 */
export function createRouterListener (table: RouteTable, debug: boolean, trustedHosts?: TrustedHosts) {
  return function router (event: RequestEvent): void {
    const { request, context } = event
    resolveRequestUri(request, context, trustedHosts)
    const options = request.routeOptions
    if (!request.is404 && !context.forcedMiss) {
      const params = request.params as Record<string, string>
      // Symfony's default requirement: `/hello/` does not match `/hello/:name` (Fastify's router
      // matches it with an empty name), so the route is refused and the miss answered
      if (emptyParameter(options.url, params) === undefined) {
        const route = matchedRoute(table, options)
        context.attributes._route = route.name
        context.attributes._controller = route.controller
        context.attributes._route_params = params
        return
      }
      context.forcedMiss = true
    }
    // a miss under an app's own not-found handler is that handler's to answer
    if (!context.forcedMiss && (options.config as StampedConfig)?.[kKernelNotFound] !== true) return
    const answer = routingFailure(table, request, context, debug)
    if (answer instanceof HttpException) {
      // Fastify runs its not-found handler for a 404 only: a refused route (forcedMiss) has its
      // own handler, so its error is answered with the other kernel.request failures
      if (request.is404) context.routingError = answer
      event.fail(answer)
    } else if (context.routing?.kind === 'redirect') {
      // Symfony's redirectable matcher answers with a route match whose controller redirects:
      // later request listeners (locale, firewall) and the controller stages still run, then the
      // kernel sends the redirect in place of a controller (the not-found handler for a miss,
      // the kernel.controller hook for a route the kernel refused)
      context.redirect = answer
      if (context.routing.route !== undefined) context.attributes._route = context.routing.route.name
      context.attributes._controller = 'redirect'
      context.attributes._route_params = context.routing.params as Record<string, string>
    }
  }
}
