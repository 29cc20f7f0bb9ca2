import FindMyWay from 'find-my-way'
import { distance } from 'fastest-levenshtein'
import type { RouteDefinition } from './route-table.js'
import type { RoutingOutcome } from './matcher.js'
import { toggleTrailingSlash } from './matcher.js'
import { emptyParameter, parsePattern } from './route-pattern.js'
import type { ParsedPattern } from './route-pattern.js'
import { collapseTrailingSlashes, routingPath } from './routing-path.js'

/** Why one route of the table did or did not match a request. */
export interface RouteTraceLine {
  name: string
  methods: string[]
  /** the route's path with `{param}` placeholders */
  path: string
  verdict: 'match' | 'method' | 'requirement' | 'slash' | 'path'
  reason: string
  /** lower is closer: used to pick the near misses a 404 page shows */
  closeness: number
}

/** What routing decided for a request, as the profiler's routing panel and the routing console show it. */
export interface RoutingData {
  outcome: 'matched' | 'redirect' | 'not-found' | 'method-not-allowed' | 'none'
  route: { name: string, url: string, methods: string[], controller: string, params: Record<string, string> } | null
  /** where the trailing-slash redirect sent the client */
  redirect: string | null
  allow: string[]
  /** the last path the matcher tried (404s) */
  attemptedPath: string | null
  /** each route and why it did not match; stored for misses, computed on view for matches */
  trace: RouteTraceLine[] | null
}

type Router = FindMyWay.Instance<FindMyWay.HTTPVersion.V1>

/** What tracing needs of a route, made once per route definition (a new table has new definitions). */
interface CompiledRoute {
  pattern: ParsedPattern
  exact: Router
  loose: Router
  /** the display path's segments after the leading slash */
  segments: string[]
}

const compiled = new WeakMap<RouteDefinition, CompiledRoute>()

function compile (route: RouteDefinition): CompiledRoute {
  let found = compiled.get(route)
  if (found !== undefined) return found
  const pattern = parsePattern(route.url)
  const exact: Router = FindMyWay({ maxParamLength: 1 << 17 })
  const loose: Router = FindMyWay({ maxParamLength: 1 << 17 })
  // the route is registered for every method it has; a path hit under any of them means the path matches
  for (const method of route.methods) {
    try { exact.on(method as FindMyWay.HTTPMethod, route.url, noop) } catch { /* an unusual method: the table has it */ }
    try { loose.on(method as FindMyWay.HTTPMethod, pattern.loose, noop) } catch { /* idem */ }
  }
  found = { pattern, exact, loose, segments: pattern.display.split('/').slice(1) }
  compiled.set(route, found)
  return found
}

function noop (): void {}

function findAny (router: Router, methods: string[], path: string): FindMyWay.FindResult<FindMyWay.HTTPVersion.V1> | null {
  for (const method of methods) {
    const hit = router.find(method as FindMyWay.HTTPMethod, path)
    if (hit !== null) return hit
  }
  return null
}

function decode (segment: string): string {
  try { return decodeURIComponent(segment) } catch { return segment }
}

/** The first static segment of the route that the path does not have, in words (`want`, `got`: segments after the leading slash). */
function pathDifference (display: string, want: readonly string[], got: readonly string[]): string {
  if (display === '/') return 'the route is the root path "/"'
  for (let i = 0; i < want.length; i++) {
    if (i >= got.length) return `the path stops before segment ${i + 1} ("${want[i]}")`
    if (!want[i].includes('{') && decode(got[i]) !== want[i]) return `segment ${i + 1} is "${got[i]}", the route expects "${want[i]}"`
  }
  if (got.length > want.length) return `the path has ${got.length} segments, the route ${want.length}`
  return 'the path does not match'
}

/** A hit of the route's own path, unless Symfony's default requirement refuses it (an empty parameter). */
function pathHit (route: RouteDefinition, exact: Router, path: string): FindMyWay.FindResult<FindMyWay.HTTPVersion.V1> | null {
  const hit = findAny(exact, route.methods, path)
  return hit === null || emptyParameter(route.url, hit.params) !== undefined ? null : hit
}

/**
 * For each route, why it did or did not match `method path` (the raw path): the path differs
 * (and where), a requirement failed (which, on what value), a parameter is empty, the method is
 * not accepted, or only the trailing slash differs. Mirrors Symfony's TraceableUrlMatcher,
 * with reasons, by the kernel's matching rules (`routingPath`, the static routes' several
 * trailing slashes, no empty parameters).
 */
export function traceRoutes (routes: readonly RouteDefinition[], method: string, rawPath: string): RouteTraceLine[] {
  const canonical = method === 'HEAD' ? 'GET' : method
  const path = routingPath(rawPath)
  const oneSlash = path.endsWith('//') ? collapseTrailingSlashes(path) : undefined
  // what depends on the path alone is worked out once, not once per route
  const toggled = toggleTrailingSlash(rawPath)
  const toggledPath = toggled === undefined ? undefined : routingPath(toggled)
  const segments = rawPath.split('/').slice(1)
  const lines: RouteTraceLine[] = []
  for (const route of routes) {
    const { pattern, exact, loose, segments: routeSegments } = compile(route)
    const base = { name: route.name, methods: route.methods, path: pattern.display }
    const staticSlashes = oneSlash !== undefined && oneSlash !== '/' && pattern.parameters.length === 0 && !route.url.includes('*') && route.url === oneSlash
    // one lookup tells both: a hit, or a hit refused for an empty parameter
    const hit = findAny(exact, route.methods, path)
    const empty = hit === null ? undefined : emptyParameter(route.url, hit.params)
    if (staticSlashes || (hit !== null && empty === undefined)) {
      if (route.methods.includes(canonical)) lines.push({ ...base, verdict: 'match', reason: 'matches', closeness: 0 })
      else lines.push({ ...base, verdict: 'method', reason: `method ${method} is not in ${route.methods.join(', ')}`, closeness: 1 })
      continue
    }
    if (hit !== null) {
      lines.push({ ...base, verdict: 'requirement', reason: `parameter "${empty ?? ''}" is empty: a parameter matches one or more characters`, closeness: 3 })
      continue
    }
    if (toggledPath !== undefined && pathHit(route, exact, toggledPath) !== null) {
      const redirects = (canonical === 'GET') && route.methods.includes('GET')
      lines.push({ ...base, verdict: 'slash', reason: `trailing slash: the route is ${pattern.display}${redirects ? ' (a GET or HEAD request is redirected)' : ''}`, closeness: 2 })
      continue
    }
    const looseHit = pattern.requirements.length > 0 ? findAny(loose, route.methods, path) : null
    if (looseHit !== null) {
      const failed = pattern.requirements.find(({ name, source }) => {
        const value = looseHit.params[name]
        try { return value === undefined || !new RegExp(source).test(value) } catch { return true }
      })
      const reason = failed === undefined
        ? 'the requirements do not match'
        : `requirement "${failed.name}" failed: "${looseHit.params[failed.name] ?? ''}" does not match ${failed.source}`
      lines.push({ ...base, verdict: 'requirement', reason, closeness: 3 })
      continue
    }
    lines.push({ ...base, verdict: 'path', reason: pathDifference(pattern.display, routeSegments, segments), closeness: 4 + distance(rawPath.slice(0, 256), pattern.display.slice(0, 256)) / Math.max(rawPath.length, pattern.display.length, 1) })
  }
  return lines
}

const TRACES_KEPT = 256
const MAX_CACHED_PATH = 2048
/** recent traces, by the routes they were traced against, method and path */
const traces = new WeakMap<readonly RouteDefinition[], Map<string, { count: number, lines: readonly RouteTraceLine[] }>>()

/**
 * `traceRoutes`, remembered for the last TRACES_KEPT misses of a route list (as long as it has
 * the same routes): a browser asks for the same missing path again and again (its favicon, a
 * stale link), and each debug 404 page and its profile show the closest routes. Lines are shared:
 * never changed by their readers.
 */
export function tracedRoutes (routes: readonly RouteDefinition[], method: string, rawPath: string): readonly RouteTraceLine[] {
  if (rawPath.length > MAX_CACHED_PATH) return traceRoutes(routes, method, rawPath)
  let byPath = traces.get(routes)
  if (byPath === undefined) traces.set(routes, byPath = new Map())
  const key = `${method} ${rawPath}`
  const known = byPath.get(key)
  if (known !== undefined && known.count === routes.length) return known.lines
  const lines = traceRoutes(routes, method, rawPath)
  if (byPath.size >= TRACES_KEPT) byPath.delete(byPath.keys().next().value!)
  byPath.set(key, { count: routes.length, lines })
  return lines
}

/** A verdict in words, as the routing panel and the routing console show it. */
export const VERDICT_TEXT: Record<RouteTraceLine['verdict'], string> = { match: 'matches', method: 'method', requirement: 'requirement', slash: 'trailing slash', path: 'path differs' }

/** What the matcher decided for a request, in one sentence (the routing panel, the routing console). */
export function routingOutcomeText (routing: Pick<RoutingData, 'outcome' | 'route' | 'redirect' | 'attemptedPath' | 'allow'>): string {
  switch (routing.outcome) {
    case 'matched': return `Matched route "${routing.route?.name ?? ''}"`
    case 'redirect': return `No route matched; the path with the other trailing slash did: 301 to ${routing.redirect ?? ''}`
    case 'not-found': return `No route matched (404); the last path tried was ${routing.attemptedPath ?? ''}`
    case 'method-not-allowed': return `The path matched, the method did not (405); allowed: ${routing.allow.join(', ')}`
    case 'none': return 'Routing did not run for this request (it was answered earlier)'
  }
}

/** The routes that came closest to matching, closest first: what a 404 page shows. */
export function nearMisses (trace: readonly RouteTraceLine[], count = 5): RouteTraceLine[] {
  if (count !== 5) return closestOf(trace, count)
  const known = closest.get(trace)
  if (known !== undefined) return known
  const found = closestOf(trace, count)
  closest.set(trace, found)
  return found
}

/** the closest routes of each remembered trace */
const closest = new WeakMap<readonly RouteTraceLine[], RouteTraceLine[]>()

function closestOf (trace: readonly RouteTraceLine[], count: number): RouteTraceLine[] {
  return trace.filter((line) => line.verdict !== 'match')
    .map((line, index) => ({ line, index }))
    .sort((a, b) => a.line.closeness - b.line.closeness || a.index - b.index)
    .slice(0, count)
    .map(({ line }) => line)
}

/** What routing recorded of a request (the kernel's context has it). */
export interface RoutedState {
  /** what the matcher decided for a miss; undefined for a match */
  routing: RoutingOutcome | undefined
  attributes: { _route?: string, _route_params?: Record<string, string> }
}

/**
 * What routing decided, in words and data: the matched route with its parameters, or for a miss
 * what the matcher answered (404, 405 with Allow, the trailing-slash redirect) and each route's
 * reason (`trace`, traced only for a miss). The profiler's routing panel and the console's
 * `match` show it.
 */
export function routingSummary (state: RoutedState, matched: RouteDefinition | undefined, trace: () => RouteTraceLine[] | null): RoutingData {
  const outcome = state.routing
  const data: RoutingData = { outcome: 'none', route: null, redirect: null, allow: [], attemptedPath: null, trace: null }
  if (matched !== undefined && outcome === undefined && typeof state.attributes._route === 'string') {
    data.outcome = 'matched'
    data.route = {
      name: matched.name,
      url: matched.url,
      methods: matched.methods,
      controller: matched.controller,
      params: { ...(state.attributes._route_params ?? {}) }
    }
    return data
  }
  if (outcome === undefined) return data
  data.trace = trace()
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
