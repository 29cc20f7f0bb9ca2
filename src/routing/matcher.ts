import type { RouteDefinition, RouteTable } from './route-table.js'
import type { RouteParams } from './route-pattern.js'
import { routingPath } from './routing-path.js'

/** What matching decided for a request that Fastify's router did not serve. */
export type RoutingOutcome =
  /** `route` is undefined for a target registered before the kernel and never requested yet */
  | { kind: 'redirect', path: string, route: RouteDefinition | undefined, params: RouteParams }
  | { kind: 'method-not-allowed', allow: string[] }
  | { kind: 'not-found', attemptedPath: string }

/**
 * Symfony's redirectable URL matcher, for a request Fastify found no route for:
 * a path matched with other methods is a 405; otherwise GET and HEAD try the path with the
 * trailing slash toggled (a hit is a redirect); otherwise 404, reporting the last path tried.
 * `rawPath` is the path as sent (what the answers report); `routedPath` the one Fastify's
 * router was given (`kernelServerOptions().rewriteUrl` puts it in the form Symfony matches).
 */
export function matchMiss (table: RouteTable, method: string, rawPath: string, routedPath = routingPath(rawPath)): RoutingOutcome {
  const allow = table.allowedMethods(routedPath)
  // the request's own method among them means Fastify refused it for another reason
  // (route constraints such as host or version): that is a miss, not a wrong method
  const canonical = method === 'HEAD' ? 'GET' : method
  if (allow.length > 0 && !allow.includes(canonical)) return { kind: 'method-not-allowed', allow }
  if (allow.length > 0) return { kind: 'not-found', attemptedPath: rawPath }
  if (method !== 'GET' && method !== 'HEAD') return { kind: 'not-found', attemptedPath: rawPath }
  const toggled = toggleTrailingSlash(rawPath)
  if (toggled === undefined) return { kind: 'not-found', attemptedPath: rawPath }
  const target = table.match('GET', routingPath(toggled))
  // a route that opted out, and a wildcard's empty tail (`/public` for `/public/*`: a plugin
  // such as @fastify/static serves files below it, and redirects itself when asked to)
  if (target !== null && target.route?.slashRedirect !== false && target.params['*'] !== '') return { kind: 'redirect', path: toggled, route: target.route, params: target.params }
  return { kind: 'not-found', attemptedPath: toggled }
}

/**
 * The path Symfony's matcher tried last when nothing matched: for GET and HEAD the one with the
 * trailing slash toggled, for other methods the path as it is. The 404's cause reports it.
 */
export function lastAttemptedPath (method: string, rawPath: string): string {
  if (method !== 'GET' && method !== 'HEAD') return rawPath
  return toggleTrailingSlash(rawPath) ?? rawPath
}

/** `/a` → `/a/`, `/a/` and `/a//` → `/a`; `/` (and `//`) have no other form. */
export function toggleTrailingSlash (path: string): string | undefined {
  const trimmed = trimTrailingSlashes(path)
  if (trimmed === '/') return undefined
  return trimmed === path ? path + '/' : trimmed
}

function trimTrailingSlashes (path: string): string {
  let end = path.length
  while (end > 0 && path.charCodeAt(end - 1) === 47 /* / */) end--
  return end === 0 ? '/' : path.slice(0, end)
}
