/**
 * The application's routes as the routing console lists them (Symfony's `debug:router`): name,
 * methods, path with its requirements, where it was registered, and what the kernel adds to it
 * (firewall, access rule, `isGranted` check, locale).
 */
import type { Kernel } from '../src/kernel/kernel.js'
import { parsePattern } from '../src/routing/route-pattern.js'
import { AccessMap } from '../src/security/access-map.js'
import { controllerName } from '../src/routing/route-table.js'
import type { RegisteredRoute } from './load-app.js'

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

/** What the kernel's request services add to a route, from the options it was registered with. */
function flagsOf (kernel: Kernel, route: RegisteredRoute, display: string, requirements: Record<string, string>): RouteFlags {
  const flags: RouteFlags = {}
  const security = kernel.options.security
  // a path of the route, placeholders as their names: what the path-based rules are tested on
  const samplePath = display.replace(/\{([^}]*)\}/g, (_whole, name: string) => name === '*' ? '' : name)
  if (security !== undefined) {
    const firewall = security.firewalls.find((f) => new RegExp(f.pattern ?? '^/').test(samplePath))
    if (firewall !== undefined) flags.firewall = firewall.security === false ? `${firewall.name} (no security)` : firewall.name
    const rules = new AccessMap((security.accessControl ?? []).map((rule) => ({ path: rule.path, roles: [rule.roles].flat(), ...(rule.methods === undefined ? {} : { methods: rule.methods.map((m) => m.toUpperCase()) }) })))
    const rule = route.methods.map((method) => rules.match(samplePath, method)).find((found) => found !== null)
    if (rule !== undefined && rule !== null) flags.access = rule.roles.join('|')
  }
  if (route.config.isGranted !== undefined) flags.isGranted = describeCheck(route.config.isGranted)
  if (parsePattern(route.url).parameters.includes('_locale')) {
    flags.locale = requirements._locale ?? kernel.options.locale?.enabled.join('|') ?? 'any'
  }
  if (route.config.catchAll === true) flags.catchAll = true
  if (route.internal) flags.internal = true
  return flags
}

/**
 * Every route, in registration order; a GET route's automatic HEAD twin is not listed apart
 * (HEAD is served as GET).
 */
export function listRoutes (kernel: Kernel, routes: readonly RegisteredRoute[]): ListedRoute[] {
  const listed: ListedRoute[] = []
  for (const route of routes) {
    const methods = route.methods.length > 1 ? route.methods.filter((m) => m !== 'HEAD') : route.methods
    if (methods.length === 1 && methods[0] === 'HEAD' && routes.some((other) => other !== route && other.url === route.url && other.methods.includes('GET'))) continue
    const { path, requirements } = pathWithRequirements(route.url)
    const definition = kernel.routes.definitionOf(methods[0], route.url)
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
      flags: flagsOf(kernel, route, parsePattern(route.url).display, requirements)
    })
  }
  return listed
}

/** The routes whose name or path contains `filter` (any case). */
export function filterRoutes (routes: readonly ListedRoute[], filter: string | undefined): ListedRoute[] {
  if (filter === undefined) return [...routes]
  const needle = filter.toLowerCase()
  return routes.filter((route) => route.name.toLowerCase().includes(needle) || route.path.toLowerCase().includes(needle) || route.url.toLowerCase().includes(needle))
}

/** `firewall: main, access: ROLE_ADMIN, locale: en|fr`: the flags as one cell of the table. */
export function flagsText (flags: RouteFlags): string {
  const parts: string[] = []
  if (flags.firewall !== undefined) parts.push(`firewall: ${flags.firewall}`)
  if (flags.access !== undefined) parts.push(`access: ${flags.access}`)
  if (flags.isGranted !== undefined) parts.push(`isGranted: ${flags.isGranted}`)
  if (flags.locale !== undefined) parts.push(`locale: ${flags.locale}`)
  if (flags.catchAll === true) parts.push('catch-all')
  if (flags.internal === true) parts.push('profiler')
  return parts.join(', ')
}
