/**
 * The application's routes as the routing console lists them (Symfony's `debug:router`): name,
 * methods, path with its requirements, where it was registered, and what the kernel's request
 * services add to it (firewall, access rule, `isGranted` check, locale).
 */
import { parsePattern } from './route-pattern.js'
import { controllerName } from './route-table.js'
import type { RouteTable } from './route-table.js'

/** A route as it was registered: what the console lists. */
export interface RegisteredRoute {
  methods: string[]
  /** Fastify's path, prefix included */
  url: string
  prefix: string
  /** the plugin whose (encapsulated) context registered it; `fastify` for the root */
  plugin: string
  config: Record<string | symbol, unknown>
  handler: unknown
  /** the kernel's own routes (profiler) */
  internal: boolean
}

/**
 * What the request services say of a path, from the app's options: its firewall, the roles of
 * the first access rule for a method, the locales a `_locale` parameter accepts.
 */
export interface RouteServices {
  firewall: (path: string) => string | undefined
  access: (path: string, method: string) => string | undefined
  locales: string | undefined
}

export interface RouteFlags {
  /** the firewall whose pattern covers the path */
  firewall?: string
  /** the roles of the first `accessControl` rule that applies */
  access?: string
  /** the route's own `isGranted` check */
  isGranted?: string
  /** the locales a `_locale` parameter accepts */
  locale?: string
  /** a catch-all that is not a resource: never in Allow, never a 405 */
  catchAll?: true
  /** one of the kernel's own routes (the profiler's) */
  internal?: true
}

export interface ListedRoute {
  name: string
  methods: string[]
  /** Symfony's notation, requirements inline: `/items/{id<^\d+$>}` */
  path: string
  /** the path as registered with Fastify */
  url: string
  requirements: Record<string, string>
  prefix: string
  plugin: string
  controller: string
  flags: RouteFlags
}

function describeCheck (check: unknown): string {
  if (typeof check === 'string') return check
  if (Array.isArray(check)) return check.join('|')
  return typeof check === 'function' ? `${check.name === '' ? 'a function' : check.name + '()'}` : String(check)
}

/** The route's path with each requirement written inside its placeholder, as Symfony shows them. */
export function pathWithRequirements (url: string): { path: string, requirements: Record<string, string> } {
  const pattern = parsePattern(url)
  const requirements = Object.fromEntries(pattern.requirements.map(({ name, source }) => [name, source]))
  const path = pattern.display.replace(/\{([A-Za-z0-9_$]+)\}/g, (whole, name: string) => requirements[name] === undefined ? whole : `{${name}<${requirements[name]}>}`)
  return { path, requirements }
}

/** What the kernel's request services add to a route. */
function flagsOf (services: RouteServices, route: RegisteredRoute, display: string, requirements: Record<string, string>): RouteFlags {
  const flags: RouteFlags = {}
  // a path of the route, placeholders as their names: what the path-based rules are tested on
  const samplePath = display.replace(/\{([^}]*)\}/g, (_whole, name: string) => name === '*' ? '' : name)
  const firewall = services.firewall(samplePath)
  if (firewall !== undefined) flags.firewall = firewall
  const access = route.methods.map((method) => services.access(samplePath, method)).find((found) => found !== undefined)
  if (access !== undefined) flags.access = access
  if (route.config.isGranted !== undefined) flags.isGranted = describeCheck(route.config.isGranted)
  if (parsePattern(route.url).parameters.includes('_locale')) {
    flags.locale = requirements._locale ?? services.locales ?? 'any'
  }
  if (route.config.catchAll === true) flags.catchAll = true
  if (route.internal) flags.internal = true
  return flags
}

/**
 * Every route, in registration order; a GET route's automatic HEAD twin is not listed apart
 * (HEAD is served as GET).
 */
export function listRoutes (table: RouteTable, services: RouteServices, routes: readonly RegisteredRoute[]): ListedRoute[] {
  const listed: ListedRoute[] = []
  for (const route of routes) {
    const methods = route.methods.length > 1 ? route.methods.filter((m) => m !== 'HEAD') : route.methods
    if (methods.length === 1 && methods[0] === 'HEAD' && routes.some((other) => other !== route && other.url === route.url && other.methods.includes('GET'))) continue
    const { path, requirements } = pathWithRequirements(route.url)
    const definition = table.definitionOf(methods[0], route.url)
    const configName = typeof route.config.name === 'string' ? route.config.name : undefined
    listed.push({
      name: (route.internal ? configName : definition?.name) ?? configName ?? route.url,
      methods,
      path,
      url: route.url,
      requirements,
      prefix: route.prefix,
      plugin: route.plugin,
      controller: definition?.controller ?? controllerName(route.handler),
      flags: flagsOf(services, route, parsePattern(route.url).display, requirements)
    })
  }
  return listed
}
