/**
 * The console's one way into an application (`fastify-kernel routes|match|listeners|profile
 * <app>`): `openAppConsole()` loads the app module without listening on a port and answers
 * what the console asks — the route list, the kernel's answer to a request, the stage
 * listeners, a stored profile. The console (cli/) uses nothing else of the package.
 *
 * The module is:
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
import { withKernelServerOptions } from './create-app.js'
import type { FastifyKernel } from './fastify-kernel.js'
import { adoptRoute } from '../src/routing/route-table.js'
import { listRoutes } from '../src/routing/route-list.js'
import type { ListedRoute, RegisteredRoute, RouteServices } from '../src/routing/route-list.js'
import { AccessMap } from '../src/security/access-map.js'
import type { StageName } from '../src/kernel/stages.js'
export { STAGE_NAMES as STAGES } from '../src/kernel/stages.js'
export type { StageName } from '../src/kernel/stages.js'
import type { ListenerDescription } from '../src/kernel/dispatcher.js'
import { kKernelInternalRoute, routeMarks } from '../src/symbols.js'
import { errorCodes } from '../src/errors/codes.js'
import { kernelAnswer } from './console-answer.js'
import type { KernelAnswer } from './console-answer.js'
import type { Profiler } from '../src/profiler/profiler.js'
import type { KernelProfiler } from '../src/profiler/kernel-profiler.js'
import type { ProfileSummary } from '../src/profiler/profile.js'
import { summarize } from '../src/profiler/profile.js'
import { TOKEN_PATTERN } from '../src/profiler/token.js'
import { setProfilesReadOnly } from '../src/profiler/storage/read-only.js'
import { PROFILER_TOOLS } from '../src/profiler/mcp/tools.js'
import type { ProfileSource, ToolAnswer } from '../src/profiler/mcp/tools.js'
import type { Readable, Writable } from 'node:stream'

export type { KernelAnswer } from './console-answer.js'
export type { ListedRoute, RouteFlags } from '../src/routing/route-list.js'
export type { RouteTraceLine } from '../src/routing/trace.js'
export { VERDICT_TEXT } from '../src/routing/trace.js'
export type { ListenerDescription } from '../src/kernel/dispatcher.js'
export { TOKEN_PATTERN } from '../src/profiler/token.js'
export { statusOfSummary } from '../src/profiler/pages/status.js'
export { FLAG_NAMES, PROFILE_FLAGS } from '../src/profiler/flags.js'
export { PLAIN, compareText, summaryLine, triageText } from '../src/profiler/mcp/tools.js'
export type { CompareAnswer, FilterInput, ListAnswer, TriageAnswer } from '../src/profiler/mcp/tools.js'

/** The profiler tools an agent calls over MCP, which the console's `profile find|triage|diff` run too. */
export type ToolName = 'list_profiles' | 'get_profile' | 'triage_profile' | 'compare_profiles'

/** A stored profile, as `fastify-kernel profile` prints it: its summary and each panel's figure. */
export interface ProfileReport {
  /** where the app keeps profiles; `shared`: readable from another process than the one that stored them (file, Redis) */
  storage: { kind: string, shared: boolean }
  profile: (ProfileSummary & { aborted: boolean, panels: Array<{ name: string, label: string, figure: string | null }> }) | null
}

const INIT_CHANNEL = 'fastify.initialization'

function isFastify (value: unknown): value is FastifyInstance {
  const app = value as Partial<FastifyInstance> | null | undefined
  return typeof app === 'object' && app !== null && typeof app.inject === 'function' && typeof app.ready === 'function' && typeof app.addHook === 'function'
}

class RouteRecorder {
  readonly routes = new Map<FastifyInstance, RegisteredRoute[]>()
  /** a kernel decorated on a context the routes were registered in (an encapsulated registration) */
  kernel: FastifyKernel | undefined
  profiler: KernelProfiler | undefined

  readonly onInit = (message: unknown): void => { this.watch((message as { fastify: FastifyInstance }).fastify) }

  private watch (app: FastifyInstance): void {
    const list: RegisteredRoute[] = []
    this.routes.set(app, list)
    const recorder = this
    app.addHook('onRoute', function recordRoute (this: FastifyInstance, route: RouteOptions) {
      recorder.kernel ??= this.kernel
      recorder.profiler ??= this.kernelProfiler
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
        internal: routeMarks(config)[kKernelInternalRoute] === true
      })
    })
  }
}

async function importModule (path: string): Promise<Record<string, unknown>> {
  const file = resolve(path)
  if (!existsSync(file)) throw new errorCodes.KERNEL_CONSOLE_APP(`cannot find the app module "${path}" (looked for ${file})`)
  try {
    return await import(pathToFileURL(file).href) as Record<string, unknown>
  } catch (error) {
    throw new errorCodes.KERNEL_CONSOLE_APP(`cannot load the app module "${path}": ${(error as Error).message}`)
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
      throw new errorCodes.KERNEL_CONSOLE_APP(`build() of "${path}" failed: ${(error as Error).message}`)
    }
    if (!isFastify(built)) throw new errorCodes.KERNEL_CONSOLE_APP(`build() of "${path}" did not return a Fastify instance`)
    return built
  }
  if (typeof module.default === 'function') {
    const options = (module.options ?? {}) as FastifyServerOptions
    // created while the console listens to Fastify's initialisation channel: its routes are recorded
    const app = Fastify(withKernelServerOptions({ logger: false, ...options }))
    app.register(module.default as never)
    return app
  }
  throw new errorCodes.KERNEL_CONSOLE_APP(`"${path}" exports no app: export a build() function returning a Fastify instance, or a plugin as its default export (as fastify-cli loads it)`)
}

/** What the console asks of a loaded app. */
export class AppConsole {
  constructor (
    private readonly app: FastifyInstance,
    private readonly kernel: FastifyKernel,
    /** every route, in registration order */
    private readonly registered: readonly RegisteredRoute[],
    private readonly profiler: KernelProfiler | undefined
  ) {}

  /** Every route as Symfony's `debug:router` lists them, with what the request services add. */
  routes (): ListedRoute[] {
    return listRoutes(this.kernel.routes, requestServices(this.kernel), this.registered)
  }

  /** The kernel's answer to `method target` sent with `host` (Symfony's `router:match`). */
  match (method: string, target: string, host: string): Promise<KernelAnswer> {
    return kernelAnswer(this.app, this.kernel, method, target, host)
  }

  /** Every stage listener, with its priority and origin (Symfony's `debug:event-dispatcher`). */
  listeners (stage?: StageName): ListenerDescription[] {
    return this.kernel.listeners(stage)
  }

  /**
   * A stored profile (`ref`: its token, or `latest`) from the app's profiler storage, opened
   * for reading: a file storage is read as it is on disk (a running server keeps writing it),
   * Redis is shared by every process; a memory storage holds only what this process stored,
   * which is nothing.
   */
  async profile (ref: string): Promise<ProfileReport> {
    const profiler = this.runningProfiler()
    const storage = { kind: profiler.storage.kind, shared: profiler.storage.kind !== 'memory' }
    let token: string | undefined = ref
    // as /_profiler/latest: the newest page, not a request the browser made by itself
    if (ref === 'latest') token = (await profiler.storage.find({ limit: 1, pages: true }))[0]?.token
    const profile = token === undefined || !TOKEN_PATTERN.test(token) ? undefined : await profiler.storage.load(token)
    if (profile === undefined) return { storage, profile: null }
    const panels = profiler.panels?.menu(profile, '') ?? []
    return {
      storage,
      profile: { ...summarize(profile), aborted: profile.aborted, panels: panels.map((panel) => ({ name: panel.name, label: panel.label, figure: panel.badge?.text ?? null })) }
    }
  }

  /** The app's profiler, as this console loaded it with the app (the package's own `Profiler`). */
  private runningProfiler (): Profiler {
    const profiler = this.profiler?.enabled === true ? this.profiler as Profiler : undefined
    if (profiler === undefined) throw new errorCodes.KERNEL_CONSOLE_APP('the app has no profiler: debug is off, or its profiler option is false')
    return profiler
  }

  /** Where the profiles are read: the app's storage (opened for reading), its panels and their readers. */
  profileSource (): ProfileSource & { shared: boolean } {
    const profiler = this.runningProfiler()
    return { storage: profiler.storage, panels: profiler.panels, readers: profiler.readers, shared: profiler.storage.kind !== 'memory' }
  }

  /** Runs one of the profiler's agent tools on the app's stored profiles (as `/_profiler/mcp` does). */
  async tool<T> (name: ToolName, input: Record<string, unknown>): Promise<ToolAnswer<T>> {
    const tool = PROFILER_TOOLS.find((candidate) => candidate.name === name)!
    return await tool.run(this.profileSource(), input) as ToolAnswer<T>
  }

  /**
   * Serves the profiler's MCP server over stdio (`fastify-kernel mcp <app>`) until the client
   * closes its end; the MCP SDK is loaded now, not before.
   */
  async serveMcp (input: Readable, output: Writable, onerror?: (error: Error) => void): Promise<void> {
    const source = this.profileSource()
    const { serveProfilerStdio } = await import('../src/profiler/mcp/stdio.js')
    await serveProfilerStdio(source, input, output, onerror)
  }

  async close (): Promise<void> {
    await this.app.close()
  }
}

/** What the security and locale options say of a path, for the route list's flags. */
function requestServices (kernel: FastifyKernel): RouteServices {
  const security = kernel.options.security
  const rules = new AccessMap(security?.accessControl ?? [])
  return {
    firewall: (path) => {
      const firewall = security?.firewalls.find((f) => f.pattern.test(path))
      return firewall === undefined ? undefined : firewall.security === false ? `${firewall.name} (no security)` : firewall.name
    },
    access: (path, method) => security === undefined ? undefined : rules.match(path, method)?.roles.join('|'),
    locales: kernel.options.locale?.enabled.join('|')
  }
}

export async function openAppConsole (path: string): Promise<AppConsole> {
  const recorder = new RouteRecorder()
  // the console serves no request: the app's profiler storage is opened for reading, so that
  // a file storage's folder stays the running server's
  setProfilesReadOnly(true, resolve(path))
  let app: FastifyInstance
  try {
    diagnostics.subscribe(INIT_CHANNEL, recorder.onInit)
    try {
      app = await appOf(await importModule(path), path, recorder)
    } finally {
      diagnostics.unsubscribe(INIT_CHANNEL, recorder.onInit)
    }
    try {
      await app.ready()
    } catch (error) {
      await app.close().catch(() => undefined)
      throw new errorCodes.KERNEL_CONSOLE_APP(`the app of "${path}" failed to start: ${(error as Error).message}`)
    }
  } finally {
    setProfilesReadOnly(false)
  }
  const kernel = app.kernel ?? recorder.kernel
  if (kernel === undefined) {
    await app.close()
    throw new errorCodes.KERNEL_CONSOLE_APP(`the app of "${path}" does not register the fastify-kernel plugin`)
  }
  const routes = recorder.routes.get(app) ?? []
  // routes registered before the kernel: taught to its table in definition order
  for (const route of routes) {
    if (route.internal || route.methods.every((m) => m === 'HEAD')) continue
    const method = route.methods.find((m) => m !== 'HEAD')!
    if (kernel.routes.definitionOf(method, route.url) === undefined) adoptRoute(kernel.routes, { method: route.methods, url: route.url, config: route.config, handler: route.handler })
  }
  return new AppConsole(app, kernel, routes, app.kernelProfiler ?? recorder.profiler)
}
