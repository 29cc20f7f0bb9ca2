import FindMyWay from 'find-my-way'

export interface RouteDefinition {
  /** position in definition order; the Allow header follows it */
  index: number
  name: string
  methods: string[]
  url: string
  /** readable name of the handler, Symfony's `_controller` */
  controller: string
}

export interface RouteTableOptions {
  caseSensitive?: boolean
  ignoreTrailingSlash?: boolean
  ignoreDuplicateSlashes?: boolean
  maxParamLength?: number
  allowUnsafeRegex?: boolean
}

/** HEAD is served as GET and never listed: Fastify's automatic HEAD routes are not mirrored. */
const IGNORED_METHODS = new Set(['HEAD'])

/**
 * A mirror of the application's routes, kept in step through Fastify's `onRoute`, answering
 * the questions Fastify's router does not: which methods would match this path, and does the
 * path with the other trailing slash match.
 */
export class RouteTable {
  private readonly router: FindMyWay.Instance<FindMyWay.HTTPVersion.V1>
  private readonly definitions: RouteDefinition[] = []
  private readonly methods: string[] = []

  constructor (options: RouteTableOptions = {}) {
    this.router = FindMyWay({
      caseSensitive: options.caseSensitive ?? true,
      ignoreTrailingSlash: options.ignoreTrailingSlash ?? false,
      ignoreDuplicateSlashes: options.ignoreDuplicateSlashes ?? false,
      maxParamLength: options.maxParamLength ?? 100,
      allowUnsafeRegex: options.allowUnsafeRegex ?? false
    })
  }

  get routes (): readonly RouteDefinition[] {
    return this.definitions
  }

  add (methods: string | string[], url: string, name: string | undefined, controller: string): RouteDefinition | undefined {
    const list = (Array.isArray(methods) ? methods : [methods]).map((m) => m.toUpperCase()).filter((m) => !IGNORED_METHODS.has(m))
    if (list.length === 0) return undefined
    const definition: RouteDefinition = {
      index: this.definitions.length,
      name: name ?? defaultRouteName(list, url),
      methods: list,
      url,
      controller
    }
    this.definitions.push(definition)
    for (const method of list) {
      if (!this.methods.includes(method)) this.methods.push(method)
      this.router.on(method as FindMyWay.HTTPMethod, url, noop, definition)
    }
    return definition
  }

  /** The route matching this method and path (HEAD as GET), with its decoded parameters. */
  match (method: string, path: string): { route: RouteDefinition, params: Record<string, string | undefined> } | null {
    const canonical = method === 'HEAD' ? 'GET' : method
    if (!this.methods.includes(canonical)) return null
    const found = this.router.find(canonical as FindMyWay.HTTPMethod, path)
    return found === null ? null : { route: found.store as RouteDefinition, params: found.params }
  }

  /** Methods of the routes whose path matches, in route-definition order, without duplicates. */
  allowedMethods (path: string): string[] {
    const matched: RouteDefinition[] = []
    for (const method of this.methods) {
      const found = this.router.find(method as FindMyWay.HTTPMethod, path)
      if (found !== null && !matched.includes(found.store as RouteDefinition)) matched.push(found.store as RouteDefinition)
    }
    matched.sort((a, b) => a.index - b.index)
    const allow: string[] = []
    for (const route of matched) {
      for (const method of route.methods) if (!allow.includes(method)) allow.push(method)
    }
    return allow
  }
}

function noop (): void {}

function defaultRouteName (methods: string[], url: string): string {
  const slug = url.replace(/\(.*?\)/g, '').replace(/[^a-zA-Z0-9]+/g, '_').replace(/^_+|_+$/g, '')
  return `${methods.join('_').toLowerCase()}_${slug || 'root'}`
}
