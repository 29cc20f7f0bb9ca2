/**
 * Loads an application for the routing console, without listening on a port:
 * - a module exporting a `build()` factory that returns a Fastify instance (`export async
 *   function build () { const app = Fastify(); …; return app }`), or
 * - a plugin as fastify-cli loads it: a default-exported function `(fastify, opts)`, with its
 *   server options in an optional `options` export; the console creates the instance (with
 *   `kernelServerOptions()`) and registers the plugin.
 * Every route is recorded as it is registered, through Fastify's `fastify.initialization`
 * diagnostics channel, so routes registered before the kernel are listed and matched with
 * their names and in definition order (the kernel alone learns those at their first request).
 */
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import diagnostics from 'node:diagnostics_channel'
import Fastify from 'fastify'
import type { FastifyInstance, FastifyServerOptions, RouteOptions } from 'fastify'
import { withKernelServerOptions } from '../plugins/create-app.js'
import type { Kernel } from '../src/kernel/kernel.js'
import { adoptRoute } from '../src/routing/route-table.js'
import { kKernelInternalRoute } from '../src/symbols.js'
import { CommandError } from './io.js'

/** A route as it was registered: what `routes` lists. */
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

export interface LoadedApp {
  app: FastifyInstance
  kernel: Kernel
  /** every route, in registration order */
  routes: RegisteredRoute[]
  close: () => Promise<void>
}

const INIT_CHANNEL = 'fastify.initialization'

function isFastify (value: unknown): value is FastifyInstance {
  const app = value as Partial<FastifyInstance> | null | undefined
  return typeof app === 'object' && app !== null && typeof app.inject === 'function' && typeof app.ready === 'function' && typeof app.addHook === 'function'
}

class RouteRecorder {
  readonly routes = new Map<FastifyInstance, RegisteredRoute[]>()
  /** a kernel decorated on a context the routes were registered in (an encapsulated registration) */
  kernel: Kernel | undefined

  readonly onInit = (message: unknown): void => { this.watch((message as { fastify: FastifyInstance }).fastify) }

  private watch (app: FastifyInstance): void {
    const list: RegisteredRoute[] = []
    this.routes.set(app, list)
    const recorder = this
    app.addHook('onRoute', function recordRoute (this: FastifyInstance, route: RouteOptions) {
      recorder.kernel ??= this.kernel
      const methods = (Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toUpperCase())
      const config = (route.config ?? {}) as Record<string | symbol, unknown>
      list.push({
        methods,
        url: route.url,
        prefix: (route as { prefix?: string }).prefix ?? '',
        // Fastify names a context after its plugin, and appends each fastify-plugin wrapped plugin
        // registered in it (`fastify -> fastify-kernel -> @fastify/cookie`): the first is its own
        plugin: this.pluginName.split(' -> ')[0],
        config,
        handler: route.handler,
        internal: config[kKernelInternalRoute] === true
      })
    })
  }
}

async function importModule (path: string): Promise<Record<string, unknown>> {
  const file = resolve(path)
  if (!existsSync(file)) throw new CommandError(`fastify-kernel: cannot find the app module "${path}" (looked for ${file})`)
  try {
    return await import(pathToFileURL(file).href) as Record<string, unknown>
  } catch (error) {
    throw new CommandError(`fastify-kernel: cannot load the app module "${path}": ${(error as Error).message}`)
  }
}

/** The app a module exports: its `build()` factory's, or its default-exported plugin on a new instance. */
async function appOf (module: Record<string, unknown>, path: string, recorder: RouteRecorder): Promise<FastifyInstance> {
  const fallback = module.default as Record<string, unknown> | undefined
  const build = module.build ?? (typeof fallback === 'object' && fallback !== null ? fallback.build : undefined)
  if (typeof build === 'function') {
    let built: unknown
    try {
      built = await (build as () => unknown)()
    } catch (error) {
      throw new CommandError(`fastify-kernel: build() of "${path}" failed: ${(error as Error).message}`)
    }
    if (!isFastify(built)) throw new CommandError(`fastify-kernel: build() of "${path}" did not return a Fastify instance`)
    return built
  }
  if (typeof module.default === 'function') {
    const options = (module.options ?? {}) as FastifyServerOptions
    // created while the console listens to Fastify's initialisation channel: its routes are recorded
    const app = Fastify(withKernelServerOptions({ logger: false, ...options }))
    app.register(module.default as never)
    return app
  }
  throw new CommandError(`fastify-kernel: "${path}" exports no app: export a build() function returning a Fastify instance, or a plugin as its default export (as fastify-cli loads it)`)
}

export async function loadApp (path: string): Promise<LoadedApp> {
  const recorder = new RouteRecorder()
  const module = await (async () => {
    diagnostics.subscribe(INIT_CHANNEL, recorder.onInit)
    try {
      const module = await importModule(path)
      return { module, app: await appOf(module, path, recorder) }
    } finally {
      diagnostics.unsubscribe(INIT_CHANNEL, recorder.onInit)
    }
  })()
  const app = module.app
  const close = async (): Promise<void> => { await app.close() }
  try {
    await app.ready()
  } catch (error) {
    await close().catch(() => undefined)
    throw new CommandError(`fastify-kernel: the app of "${path}" failed to start: ${(error as Error).message}`)
  }
  const kernel = app.kernel ?? recorder.kernel
  if (kernel === undefined) {
    await close()
    throw new CommandError(`fastify-kernel: the app of "${path}" does not register the fastify-kernel plugin`)
  }
  const routes = recorder.routes.get(app) ?? []
  // routes registered before the kernel: taught to its table in definition order
  for (const route of routes) {
    if (route.internal || route.methods.every((m) => m === 'HEAD')) continue
    const method = route.methods.find((m) => m !== 'HEAD')!
    if (kernel.routes.definitionOf(method, route.url) === undefined) adoptRoute(kernel.routes, { method: route.methods, url: route.url, config: route.config, handler: route.handler })
  }
  return { app, kernel, routes, close }
}
