import type { FastifyRequest } from 'fastify'
import type { RequestEvent } from '../events.js'
import type { KernelContext } from '../context.js'
import { Priority, Stage } from '../stages.js'
import { subscription } from '../dispatcher.js'
import type { RouteDefinition, RouteTable } from '../../routing/route-table.js'
import { adoptRoute } from '../../routing/route-table.js'
import { emptyParameter } from '../../routing/route-pattern.js'
import type { TrustedHosts } from '../../routing/trusted-hosts.js'
import { resolveRequestUri, routingFailure } from '../../routing/router.js'
import { HttpException } from '../../errors/exceptions.js'
import { kKernelNotFound, kKernelRoute, routeMarks } from '../../symbols.js'

/**
 * The definition of the route a request matched. Routes added after the kernel were stamped by
 * its onRoute hook; one registered before it is learnt here, at its first request (its config
 * object is the route's own, so the stamp stays).
 */
function matchedRoute (table: RouteTable, options: FastifyRequest['routeOptions']): RouteDefinition {
  const marks = routeMarks(options.config)
  const stamped = marks[kKernelRoute]
  if (stamped !== undefined) return stamped
  const learnt = adoptRoute(table, { method: options.method ?? 'GET', url: options.url ?? '', config: options.config, handler: options.handler })
  if (typeof options.config === 'object' && options.config !== null) marks[kKernelRoute] = learnt
  return learnt
}

/**
 * The request attributes of a match (`_route`, `_controller`, `_route_params`, `_format`): set
 * by the router listener, or when a request kernel.request did not run for is first asked.
 */
export function recordMatch (table: RouteTable, context: KernelContext, options: FastifyRequest['routeOptions'], params: Record<string, string>): void {
  const route = matchedRoute(table, options)
  context.attributes._route = route.name
  context.attributes._controller = route.controller
  context.attributes._route_params = params
  // Symfony's `_format` route default: the format of the route's error responses
  const format = (options.config as { format?: unknown } | undefined)?.format
  if (format !== undefined) context.attributes._format = format
}

/**
 * The router listener of kernel.request (Symfony's RouterListener). Fastify has already matched
 * the route; this records the match as request attributes. A miss fails the stage here, as
 * Symfony's RouterListener throws, so later request listeners (locale, firewall) and any
 * controller never run; the not-found handler then answers it (`context.routingError`).
 */
export function routerSubscriptions (table: RouteTable, debug: boolean, trustedHosts?: TrustedHosts) {
  return [subscription(Stage.REQUEST, Priority.ROUTER, 'router', function router (event: RequestEvent): void {
    const { request, context } = event
    const { uri, invalidHost } = resolveRequestUri(request, trustedHosts)
    context.uri = uri
    if (invalidHost !== undefined) throw invalidHost
    const options = request.routeOptions
    if (!request.is404 && !context.forcedMiss) {
      const params = request.params as Record<string, string>
      // Symfony's default requirement: `/hello/` does not match `/hello/:name` (Fastify's router
      // matches it with an empty name), so the route is refused and the miss answered
      if (emptyParameter(options.url, params) === undefined) {
        recordMatch(table, context, options, params)
        return
      }
      context.forcedMiss = true
    }
    // a miss under an app's own not-found handler is that handler's to answer
    if (!context.forcedMiss && routeMarks(options.config)[kKernelNotFound] !== true) return
    const { outcome, answer } = routingFailure(table, request, uri, debug)
    context.routing = outcome
    if (answer instanceof HttpException) {
      // Fastify runs its not-found handler for a 404 only: a refused route (forcedMiss) has its
      // own handler, so its error is answered with the other kernel.request failures
      if (request.is404) context.routingError = answer
      event.fail(answer)
    } else if (outcome.kind === 'redirect') {
      // Symfony's redirectable matcher answers with a route match whose controller redirects:
      // later request listeners (locale, firewall) and the controller stages still run, then the
      // kernel sends the redirect in place of a controller (the not-found handler for a miss,
      // the kernel.controller hook for a route the kernel refused)
      context.redirect = answer
      if (outcome.route !== undefined) context.attributes._route = outcome.route.name
      context.attributes._controller = 'redirect'
      context.attributes._route_params = outcome.params as Record<string, string>
    }
  })]
}
