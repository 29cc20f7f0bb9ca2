import type { KernelContext } from '../../kernel/context.js'
import type { RouteDefinition } from '../../routing/route-table.js'
import type { RoutingData } from '../../routing/trace.js'
import { traceRoutes } from '../../routing/trace.js'
import type { RouteTraceLine } from '../../routing/trace.js'

/** The match trace of a miss, computed once per request (the 404 page and the profile share it). */
export function missTrace (routes: readonly RouteDefinition[], method: string, context: KernelContext): RouteTraceLine[] | null {
  if (context.routing === undefined || context.uri === undefined) return null
  const cached = context.bag.get('profiler.routeTrace') as RouteTraceLine[] | undefined
  if (cached !== undefined) return cached
  const trace = traceRoutes(routes, method, context.uri.path)
  context.bag.set('profiler.routeTrace', trace)
  return trace
}

/**
 * The routing collector: the matched route with its parameters, or for a miss what the matcher
 * decided (404, 405 with Allow, the trailing-slash redirect) and each route's reason.
 */
export function collectRouting (routes: readonly RouteDefinition[], method: string, context: KernelContext, matched: RouteDefinition | undefined): RoutingData {
  const outcome = context.routing
  const data: RoutingData = { outcome: 'none', route: null, redirect: null, allow: [], attemptedPath: null, trace: null }
  if (matched !== undefined && outcome === undefined && typeof context.attributes._route === 'string') {
    data.outcome = 'matched'
    data.route = {
      name: matched.name,
      url: matched.url,
      methods: matched.methods,
      controller: matched.controller,
      params: { ...(context.attributes._route_params ?? {}) }
    }
    return data
  }
  if (outcome === undefined) return data
  data.trace = missTrace(routes, method, context)
  switch (outcome.kind) {
    case 'redirect':
      data.outcome = 'redirect'
      data.redirect = outcome.path
      break
    case 'method-not-allowed':
      data.outcome = 'method-not-allowed'
      data.allow = outcome.allow
      break
    case 'not-found':
      data.outcome = 'not-found'
      data.attemptedPath = outcome.attemptedPath
      break
  }
  return data
}
