import FindMyWay from 'find-my-way'
import { emptyParameter } from './route-pattern.js'
import type { RouteParams } from './route-pattern.js'

export interface RouteDefinition {
  /** position in definition order; the Allow header follows it (routes the kernel learnt late come first) */
  index: number
  name: string
  methods: string[]
  url: string
  /** readable name of the handler, Symfony's `_controller` */
  controller: string
  /**
   * A catch-all that is not a resource (@fastify/cors's `OPTIONS *` preflight route, or a route
   * with `config.catchAll: true`): it never turns a miss into a 405 nor appears in `Allow`.
   */
  catchAll: boolean
  /** the kernel's own routes (profiler): matched by Fastify, but never part of the app's answers */
  internal?: boolean
  /** `config.trailingSlashRedirect: false`: a request with the other trailing slash is a 404, not a 301 to this route */
  slashRedirect?: false
}

export interface RouteTableOptions {
  caseSensitive?: boolean
  ignoreTrailingSlash?: boolean
  ignoreDuplicateSlashes?: boolean
  maxParamLength?: number
  allowUnsafeRegex?: boolean
}

/**
 * Which route of the application serves `method path`, answered by Fastify's own router
 * (`app.findRoute`), so that every route counts, whenever and wherever it was registered.
 */
export type RouterLookup = (method: string, path: string) => RouteParams | null

export interface RouteMatch {
  /** undefined for a route the kernel has not learnt yet (registered before it, never requested) */
  route: RouteDefinition | undefined
  params: RouteParams
}

/** HEAD is served as GET and never listed: Fastify's automatic HEAD routes are not mirrored. */
const IGNORED_METHODS = new Set(['HEAD'])
/** Routes learnt at their first request were registered before the kernel: they sort first. */
const LATE_INDEX_BASE = -1_000_000

/**
 * The application's routes as the kernel knows them: names, handlers and definition order
 * (Fastify's router keeps none of these), mirrored from `onRoute` and from the first request
 * of a route registered before the kernel. Which route matches a path is always asked of
 * Fastify's router once `useRouter` is called; the mirror only adds what it knows about it.
 */
export class RouteTable {
  private readonly mirror: FindMyWay.Instance<FindMyWay.HTTPVersion.V1>
  private readonly definitions: RouteDefinition[] = []
  private readonly byMethodAndUrl = new Map<string, RouteDefinition>()
  private readonly mirroredMethods: string[] = []
  private lateRoutes = 0
  private lookup: RouterLookup
  private lookupMethods: readonly string[]

  constructor (options: RouteTableOptions = {}) {
    this.mirror = FindMyWay({
      caseSensitive: options.caseSensitive ?? true,
      ignoreTrailingSlash: options.ignoreTrailingSlash ?? false,
      ignoreDuplicateSlashes: options.ignoreDuplicateSlashes ?? false,
      maxParamLength: options.maxParamLength ?? 100,
      allowUnsafeRegex: options.allowUnsafeRegex ?? false
    })
    // until the application's router is known (and in unit tests), the mirror answers alone
    this.lookup = (method, path) => this.mirrorFind(method, path)?.params ?? null
    this.lookupMethods = this.mirroredMethods
  }

  /** Every route known so far, in definition order. */
  get routes (): readonly RouteDefinition[] {
    return this.definitions
  }

  /**
   * Asks `lookup` (Fastify's router) which methods match a path from now on; `methods` are the
   * methods the application may have routes for (`app.supportedMethods`).
   */
  useRouter (lookup: RouterLookup, methods: readonly string[]): void {
    this.lookup = lookup
    this.lookupMethods = methods.filter((method) => !IGNORED_METHODS.has(method))
  }

  /** Adds a route seen by `onRoute`; HEAD-only routes are not mirrored (undefined). */
  add (methods: string | string[], url: string, name: string | undefined, controller: string, catchAll?: boolean): RouteDefinition | undefined {
    return this.define(methods, url, name, controller, catchAll, this.definitions.length - this.lateRoutes)
  }

  /**
   * Adds one of the kernel's own routes: Fastify serves it, but for the application's answers
   * (404, 405, redirects, listings) it does not exist.
   */
  addInternal (methods: string | string[], url: string, name: string, controller: string): RouteDefinition {
    const list = (Array.isArray(methods) ? methods : [methods]).map((m) => m.toUpperCase())
    const definition: RouteDefinition = { index: -1, name, methods: list, url, controller, catchAll: true, internal: true }
    for (const method of list) this.mirrorOn(method, url, definition)
    return definition
  }

  /** Learns a route at its first request: it was registered before the kernel. */
  adopt (methods: string | string[], url: string, name: string | undefined, controller: string, catchAll?: boolean): RouteDefinition | undefined {
    return this.define(methods, url, name, controller, catchAll, LATE_INDEX_BASE + this.lateRoutes)
  }

  /** The definition of a route by one of its methods and its URL pattern. */
  definitionOf (method: string, url: string): RouteDefinition | undefined {
    return this.byMethodAndUrl.get(`${method.toUpperCase()} ${url}`)
  }

  private define (methods: string | string[], url: string, name: string | undefined, controller: string, catchAll: boolean | undefined, index: number): RouteDefinition | undefined {
    const list = (Array.isArray(methods) ? methods : [methods]).map((m) => m.toUpperCase()).filter((m) => !IGNORED_METHODS.has(m))
    if (list.length === 0) return undefined
    const known = this.definitionOf(list[0], url)
    if (known !== undefined) return known
    const definition: RouteDefinition = {
      index,
      name: name ?? defaultRouteName(list, url),
      methods: list,
      url,
      controller,
      catchAll: catchAll ?? isPreflightRoute(list, url)
    }
    // kept in definition order: a late route was registered before every route seen by onRoute
    if (index < 0) this.definitions.splice(this.lateRoutes++, 0, definition)
    else this.definitions.push(definition)
    for (const method of list) {
      this.byMethodAndUrl.set(`${method} ${url}`, definition)
      this.mirrorOn(method, url, definition)
    }
    return definition
  }

  private mirrorOn (method: string, url: string, definition: RouteDefinition): void {
    if (!this.mirroredMethods.includes(method)) this.mirroredMethods.push(method)
    try {
      this.mirror.on(method as FindMyWay.HTTPMethod, url, noop, definition)
    } catch {
      // the same method and URL under another constraint (host, version): the first one names it
    }
  }

  private mirrorFind (method: string, path: string): FindMyWay.FindResult<FindMyWay.HTTPVersion.V1> | null {
    return this.mirroredMethods.includes(method) ? this.mirror.find(method as FindMyWay.HTTPMethod, path) : null
  }

  /**
   * The route matching this method and path (HEAD as GET), with its decoded parameters. A
   * match Symfony's default requirement refuses (an empty parameter) is no match.
   */
  match (method: string, path: string): RouteMatch | null {
    const canonical = method === 'HEAD' ? 'GET' : method
    const params = this.lookup(canonical, path)
    if (params === null) return null
    const route = this.mirrorFind(canonical, path)?.store as RouteDefinition | undefined
    if (route?.internal === true || emptyParameter(route?.url, params) !== undefined) return null
    return { route, params }
  }

  /**
   * Methods of the routes whose path matches, in route-definition order, without duplicates;
   * catch-alls that are not resources left out.
   */
  allowedMethods (path: string): string[] {
    const matched: RouteDefinition[] = []
    // methods of routes registered before the kernel: their definition order is unknown, so
    // they come first in the router's method order, whether or not a request taught them yet
    const early: string[] = []
    for (const method of this.lookupMethods) {
      const params = this.lookup(method, path)
      if (params === null) continue
      const route = this.mirrorFind(method, path)?.store as RouteDefinition | undefined
      if (emptyParameter(route?.url, params) !== undefined) continue
      if (route === undefined) {
        if (!isPreflightMatch(method, params)) early.push(method)
      } else if (!route.catchAll && !matched.includes(route)) {
        matched.push(route)
      }
    }
    matched.sort((a, b) => a.index - b.index)
    const allow: string[] = []
    for (const route of matched) {
      if (route.index >= 0) continue
      for (const method of route.methods) if (!early.includes(method)) early.push(method)
    }
    if (early.length > 1) early.sort((a, b) => this.methodRank(a) - this.methodRank(b))
    allow.push(...early)
    for (const route of matched) {
      if (route.index < 0) continue
      for (const method of route.methods) if (!allow.includes(method)) allow.push(method)
    }
    return allow
  }

  private methodRank (method: string): number {
    const rank = this.lookupMethods.indexOf(method)
    return rank === -1 ? this.lookupMethods.length : rank
  }
}

function noop (): void {}

function defaultRouteName (methods: string[], url: string): string {
  const slug = url.replace(/\(.*?\)/g, '').replace(/[^a-zA-Z0-9]+/g, '_').replace(/^_+|_+$/g, '')
  return `${methods.join('_').toLowerCase()}_${slug || 'root'}`
}

/** An OPTIONS-only wildcard without parameters (`*`, `/api/*`): a CORS preflight handler, not a resource. */
function isPreflightRoute (methods: readonly string[], url: string): boolean {
  return methods.length === 1 && methods[0] === 'OPTIONS' && url.endsWith('*') && !url.includes(':')
}

/** The same, told from a match alone (a route registered before the kernel, not learnt yet). */
function isPreflightMatch (method: string, params: RouteParams): boolean {
  if (method !== 'OPTIONS') return false
  const names = Object.keys(params)
  return names.length === 1 && names[0] === '*'
}

/** A readable name of a route handler: Symfony's `_controller`. */
export function controllerName (handler: unknown): string {
  // Fastify binds handlers to their instance: `bound home` is `home`
  const name = typeof handler === 'function' ? handler.name.replace(/^bound /, '') : ''
  return name === '' ? 'anonymous' : name
}

/**
 * Teaches the route table a route registered before the kernel (at its first request, or all at
 * once by the routing console): name and `catchAll` from its config, controller from its handler.
 */
export function adoptRoute (table: RouteTable, route: { method: string | string[], url: string, config: unknown, handler: unknown }): RouteDefinition {
  const config = route.config as Record<string, unknown> | null | undefined
  const name = typeof config?.name === 'string' ? config.name : undefined
  const controller = controllerName(route.handler)
  const definition = table.adopt(route.method, route.url, name, controller, config?.catchAll === true ? true : undefined) ??
    // an explicit HEAD route, or the HEAD twin of a GET route not learnt yet
    table.definitionOf('GET', route.url) ??
    { index: -1, name: name ?? `head_${route.url}`, methods: ['HEAD'], url: route.url, controller, catchAll: false }
  return withSlashRedirect(definition, config)
}

/** Records a route's `config.trailingSlashRedirect: false` on its definition. */
export function withSlashRedirect (definition: RouteDefinition, config: Record<string, unknown> | null | undefined): RouteDefinition {
  if (config?.trailingSlashRedirect === false) definition.slashRedirect = false
  return definition
}
