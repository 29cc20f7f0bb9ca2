import type { FastifyRequest } from 'fastify'
import type { RequestEvent, KernelResponse } from '../events.js'
import type { KernelContext } from '../context.js'
import type { RouteDefinition, RouteTable } from '../../routing/route-table.js'
import { matchMiss } from '../../routing/matcher.js'
import { parseHttpHost, splitRequestTarget } from '../../routing/request-uri.js'
import { permanentRedirect, redirectLocation } from '../../routing/redirect.js'
import {
  BadRequestHttpException,
  HttpException,
  MethodNotAllowedException,
  MethodNotAllowedHttpException,
  NotFoundHttpException,
  ResourceNotFoundException,
  SuspiciousOperationException
} from '../../errors/http-exceptions.js'
import { KernelError } from '../../errors/kernel-errors.js'
import { headerText } from '../../http/encoding.js'

/** Stamped on each route's config by the kernel's onRoute hook. */
export const kKernelRoute = Symbol.for('fastify-kernel.route')
/** Stamped on the config of the kernel's own not-found handler. */
export const kKernelNotFound = Symbol.for('fastify-kernel.not-found')
/** Stamped on the config of the kernel's own routes (the profiler's): matched, but left out of the route table */
export const kKernelInternalRoute = Symbol.for('fastify-kernel.internal-route')

type StampedConfig = { [kKernelRoute]?: RouteDefinition, [kKernelNotFound]?: boolean } | undefined

/** Scheme, host and raw path of the request; a Host that is not a host name is a 400. */
export function resolveRequestUri (request: FastifyRequest, context: KernelContext): void {
  const { path, query } = splitRequestTarget(request.originalUrl ?? request.raw.url ?? '/')
  const scheme = request.protocol
  try {
    context.uri = { scheme, httpHost: parseHttpHost(request.host, scheme).httpHost, path, query }
  } catch (error) {
    context.uri = { scheme, httpHost: 'localhost', path, query }
    if (error instanceof SuspiciousOperationException) throw new BadRequestHttpException(error.message, error)
    throw error
  }
}

const ROUTING_MISS_FRAMES = 10

/**
 * The answer to a request no route serves: a trailing-slash redirect, or the 404 / 405
 * exception with Symfony's exact message and cause, returned (not thrown: see `KernelEvent.fail`).
 */
export function routingFailure (table: RouteTable, request: FastifyRequest, context: KernelContext, withStack = true): KernelResponse | HttpException {
  // A routing miss is an expected outcome whose stack only ever points into the kernel and
  // Fastify: where no page shows it (production), skip capturing it: it is most of a 404's
  // cost; debug pages show V8's default 10 frames of it, not the whole stacks other errors get.
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = withStack ? Math.min(limit, ROUTING_MISS_FRAMES) : 0
  try {
    return routingAnswer(table, request, context)
  } finally {
    Error.stackTraceLimit = limit
  }
}

function routingAnswer (table: RouteTable, request: FastifyRequest, context: KernelContext): KernelResponse | HttpException {
  if (context.uri === undefined) resolveRequestUri(request, context)
  const uri = context.uri!
  const outcome = matchMiss(table, request.method, uri.path)
  context.routing = outcome
  const url = context.absoluteUrl()
  switch (outcome.kind) {
    case 'redirect':
      return permanentRedirect(redirectLocation(uri, outcome.path), request.method !== 'HEAD')
    case 'method-not-allowed':
      return new MethodNotAllowedHttpException(
        outcome.allow,
        `No route found for "${request.method} ${url}": Method Not Allowed (Allow: ${outcome.allow.join(', ')})`,
        new MethodNotAllowedException(outcome.allow)
      )
    case 'not-found':
      return routeNotFound(request, context, outcome.attemptedPath)
  }
}

/**
 * Symfony's 404 for a request no route serves, `attemptedPath` being the last path the matcher
 * tried. Also raised after matching by listeners that act as requirements (`_locale`).
 */
export function routeNotFound (request: FastifyRequest, context: KernelContext, attemptedPath: string): NotFoundHttpException {
  const referer = headerText(request.headers.referer)
  // PHP truthiness, as in Symfony's RouterListener: "" and "0" add no suffix
  const from = referer !== undefined && referer !== '' && referer !== '0' ? ` (from "${referer}")` : ''
  return new NotFoundHttpException(
    `No route found for "${request.method} ${context.absoluteUrl()}"${from}`,
    new ResourceNotFoundException(`No routes found for "${attemptedPath}".`)
  )
}

/**
 * The router listener of kernel.request (priority 32). Fastify has already matched the route;
 * this records the match as request attributes, or turns a miss into the routing error here,
 * so that later request listeners and any controller never run.
 */
export function createRouterListener (table: RouteTable, debug: boolean) {
  return function router (event: RequestEvent): void {
    const { request, context } = event
    resolveRequestUri(request, context)
    const config = request.routeOptions.config as StampedConfig
    if (!request.is404 && !context.forcedMiss) {
      const route = config?.[kKernelRoute]
      if (route === undefined) {
        throw new KernelError('KERNEL_ROUTE_BEFORE_KERNEL', `Route "${request.routeOptions.method} ${request.routeOptions.url}" was added before fastify-kernel was registered; register the kernel first (await app.register(kernel)) so that it sees every route.`)
      }
      context.attributes._route = route.name
      context.attributes._controller = route.controller
      context.attributes._route_params = request.params as Record<string, string>
      return
    }
    // a miss under an app's own not-found handler is that handler's to answer
    if (!context.forcedMiss && config?.[kKernelNotFound] !== true) return
    const answer = routingFailure(table, request, context, debug)
    if (answer instanceof HttpException) {
      event.fail(answer)
    } else if (request.is404 && context.routing?.kind === 'redirect') {
      // Symfony's redirectable matcher answers with a route match whose controller redirects:
      // later request listeners (locale, firewall) and the controller stages still run, and the
      // kernel's not-found handler, Fastify's controller for a miss, sends the redirect
      context.redirect = answer
      context.attributes._route = context.routing.route.name
      context.attributes._controller = 'redirect'
      context.attributes._route_params = context.routing.params as Record<string, string>
    } else {
      // a request Fastify routed but the kernel refuses (forcedMiss) must not reach its handler
      event.setResponse(answer)
    }
  }
}
