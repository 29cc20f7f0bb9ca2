import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { KernelOptions } from './kernel-options.js'
import { resolveKernelOptions } from './kernel-options.js'
import type { Kernel } from '../src/kernel/kernel.js'
import type { KernelContext } from '../src/kernel/context.js'
import { FastifyKernel } from './fastify-kernel.js'
import { RouteTable, controllerName, withSlashRedirect } from '../src/routing/route-table.js'
import { TrustedHosts } from '../src/routing/trusted-hosts.js'
import type { RouteDefinition } from '../src/routing/route-table.js'
import { routerSubscriptions } from '../src/kernel/listeners/router-listener.js'
import { createErrorController, errorControllerSubscriptions } from '../src/kernel/listeners/error-controller.js'
import { exceptionLoggerSubscriptions } from '../src/kernel/listeners/exception-logger.js'
import { robotsSubscriptions } from '../src/kernel/listeners/robots.js'
import { cspNoncesSubscriptions } from '../src/kernel/listeners/csp-nonces.js'
import { wholeStackTraces } from '../src/errors/stack-trace-limit.js'
import { redactRequestLogs } from '../src/log/request-log-redaction.js'
import { kKernelContext, kKernelInternalRoute, kKernelRoute, routeMarks } from '../src/symbols.js'
import type { RouteMarks } from '../src/symbols.js'
import { errorCodes } from '../src/errors/codes.js'
import { installLifecycle, requestContext } from './lifecycle.js'
import type { RouteRequestHooks } from './lifecycle.js'
import { createBodyTimeout } from './body-timeout.js'
import { answerConnectRequests } from './connect.js'
import { registerLocale } from './locale.js'
import { registerRequestSecurity } from './request-security.js'
import { routerOptionsOf } from './router-options.js'
import { inactiveProfiler } from '../src/profiler/kernel-profiler.js'
import './fastify-augmentation.js'

/**
 * Mirrors each route added after the kernel (names, handlers, definition order) and stamps its
 * definition on the route's config; HEAD twins share their GET's entry. Routes registered
 * before the kernel are learnt at their first request; matching never depends on this mirror.
 */
function mirrorRoutes (app: FastifyInstance, routes: RouteTable, routeHooks: RouteHooks, nameAnonymous: boolean): void {
  // debug: anonymous handlers are named by where their route was declared, read from a stack
  // captured here (the onRoute hook runs inside app.get()) and resolved once the app is ready
  const anonymous: Array<{ definition: RouteDefinition, stack: string | undefined }> = []
  app.addHook('onRoute', (route: RouteOptions) => {
    giveRouteHooks(route, routeHooks)
    const format = route.config?.format
    if (format !== undefined && format !== 'json' && format !== 'html') {
      throw new errorCodes.KERNEL_INVALID_OPTIONS(`route "${String(route.method)} ${route.url}": config.format must be "json" or "html".`)
    }
    const name = route.config?.name
    const catchAll = route.config?.catchAll
    const marks = routeMarks(route.config)
    const controller = controllerName(route.handler)
    let definition: RouteDefinition | undefined
    if (marks[kKernelInternalRoute] === true) {
      // the kernel's own routes (profiler) are matched but never part of the app's table: they
      // take no part in 404/405/redirect answers, and where refused they answer as if absent
      definition = routes.addInternal(route.method, route.url, name ?? route.url, controller)
    } else {
      definition = routes.add(route.method, route.url, name, controller, catchAll) ??
        marks[kKernelRoute] ??
        routes.definitionOf('GET', route.url) ??
        { index: -1, name: name ?? `head_${route.url}`, methods: ['HEAD'], url: route.url, controller, catchAll: false }
    }
    const stamp: RouteMarks = { [kKernelRoute]: withSlashRedirect(definition, route.config as Record<string, unknown> | undefined) }
    route.config = { ...route.config, ...stamp }
    if (nameAnonymous && controller === 'anonymous' && definition.controller === 'anonymous') anonymous.push({ definition, stack: stackHere() })
  })
  // from now on the application's own router says which methods match a path
  app.addHook('onReady', async () => {
    if (anonymous.length > 0) {
      const { siteOfStack } = await import('../src/errors/declaration-site.js')
      for (const { definition, stack } of anonymous.splice(0)) definition.controller = siteOfStack(stack) ?? definition.controller
    }
    // only the methods Fastify has routes for are asked about (printRoutes names an empty tree)
    const methods = app.supportedMethods.filter((method) => app.printRoutes({ method: method as never }).trim() !== '(empty tree)')
    routes.useRouter((method, path) => app.findRoute({ method: method as never, url: path })?.params ?? null, methods)
  })
}

/** The current stack, deep enough to get past Fastify's and avvio's frames to the app's. */
function stackHere (): string | undefined {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 64
  const here: { stack?: string } = {}
  Error.captureStackTrace(here, stackHere)
  Error.stackTraceLimit = limit
  return here.stack
}

/** Hooks the kernel gives each route it sees (filled once the lifecycle is installed). */
interface RouteHooks {
  /** the lifecycle's onRequest hook of each route (kernel.request's answer, or the router's checks) */
  request?: RouteRequestHooks
  /** only for routes whose methods may carry a body */
  preParsing: Array<NonNullable<RouteOptions['preParsing']> & Function>
}

/** Methods whose requests Fastify never reads a body for. */
const BODYLESS = new Set(['GET', 'HEAD', 'TRACE'])

/**
 * Appends the kernel's route hooks. Route hooks run after every global hook of their kind:
 * kernel.request's answer comes after other plugins' onRequest hooks, and a GET route never pays
 * for a preParsing hook. (A HEAD twin is made from its GET's options: nothing is added twice.)
 */
function giveRouteHooks (route: RouteOptions, hooks: RouteHooks): void {
  // a hook option set to null is no hook (@fastify/compress reads it so, and replaces it)
  const append = <T> (existing: T | T[] | null | undefined, added: T[]): T[] => {
    const list = existing === undefined || existing === null ? [] : Array.isArray(existing) ? [...existing] : [existing]
    for (const hook of added) if (!list.includes(hook)) list.push(hook)
    return list
  }
  if (hooks.request !== undefined) {
    const onRequest = append(route.onRequest, [hooks.request.current()])
    route.onRequest = onRequest as RouteOptions['onRequest']
    hooks.request.track(onRequest)
  }
  const methods = Array.isArray(route.method) ? route.method : [route.method]
  if (hooks.preParsing.length > 0 && methods.some((method) => !BODYLESS.has(method.toUpperCase()))) {
    route.preParsing = append(route.preParsing, hooks.preParsing) as RouteOptions['preParsing']
  }
}

async function kernelPlugin (app: FastifyInstance, rawOptions: KernelOptions): Promise<void> {
  if (app.hasDecorator('kernel')) {
    throw new errorCodes.KERNEL_ALREADY_REGISTERED()
  }
  const options = await resolveKernelOptions(rawOptions)
  // routes added before the kernel never get a route hook of its own: kernel.request keeps its onRequest hook for them
  const routesBefore = app.printRoutes().trim() !== '(empty tree)'
  // what only some apps use is loaded only by them: an app pays for what it configures
  const { TRACE_PARTIALS, createPageRenderer, createTemplateRenderer } = await import('./views.js')
  const { handlebars } = await createTemplateRenderer(app, TRACE_PARTIALS)
  const render = createPageRenderer(handlebars, TRACE_PARTIALS)
  const sources = options.debug ? new (await import('../src/errors/source-excerpt.js')).SourceExcerpts({ root: process.cwd(), fileLinkFormat: options.fileLinkFormat }) : undefined
  const errorController = createErrorController({
    debug: options.debug,
    render,
    extensions: () => kernel.errorPageExtensions,
    redactor: (): Kernel['redactor'] => kernel.redactor,
    sources,
    formatOfPath: options.formatOfPath,
    jsonErrors: options.jsonErrors,
    exposeServerErrors: options.exposeServerErrors
  })
  const kernel = new FastifyKernel(options, new RouteTable(routerOptionsOf(app)), errorController, sources)
  app.decorate('kernel', kernel)
  // the request log lines (`incoming request`) mask what pages and profiles mask
  redactRequestLogs(app.log, () => kernel.redactor)
  app.addHook('onReady', async () => { kernel.ready = true })
  // the context as kernel.request (or the not-found context) recorded it, null until then;
  // `request.kernel` reads it, or makes it on first read where kernel.request has no hook
  app.decorateRequest(kKernelContext as unknown as string, null)
  app.decorateRequest('kernel', {
    getter: requestContext,
    setter (this: FastifyRequest, context: KernelContext) { (this as unknown as Record<symbol, unknown>)[kKernelContext] = context }
  } as never)
  const routeHooks: RouteHooks = { preParsing: [] }
  mirrorRoutes(app, kernel.routes, routeHooks, options.debug)
  if (options.debug) {
    const restoreStackTraceLimit = wholeStackTraces()
    app.addHook('onClose', async () => { restoreStackTraceLimit() })
  }

  const trustedHosts = options.trustedHosts.length > 0 ? new TrustedHosts(options.trustedHosts) : undefined
  const router = routerSubscriptions(kernel.routes, options.debug, trustedHosts)
  kernel.subscribe([
    ...router,
    ...exceptionLoggerSubscriptions,
    ...errorControllerSubscriptions(errorController),
    ...(options.debug ? cspNoncesSubscriptions : []),
    ...(options.disallowRobotsIndexing ? robotsSubscriptions : [])
  ], 'kernel')

  // before the lifecycle: @fastify/session's onRequest hook must load the session before the
  // kernel's onRequest hook runs kernel.request (session listener at 128, firewall at 8)
  const sessionCookie = options.session === undefined ? null : await (await import('./session.js')).registerSession(app, kernel, options.session, options.clock)

  routeHooks.request = installLifecycle(app, kernel, new Set(router.map(({ listener }) => listener)), routesBefore)
  const bodyTimeout = createBodyTimeout(app, options.bodyTimeout)
  if (bodyTimeout !== undefined) routeHooks.preParsing.push(bodyTimeout)
  answerConnectRequests(app)

  // optional features, each a plugin of its own wired to the kernel's stages as listeners
  if (options.locale !== undefined) registerLocale(app, kernel, options.locale)
  registerRequestSecurity(app, kernel, options.security !== undefined)
  if (options.security !== undefined) await (await import('./security.js')).registerSecurity(app, kernel, options.security, options, sessionCookie)
  // resolved in production too: its redaction policy masks production's logs and error pages
  if (options.profiler !== undefined) await (await import('./profiler.js')).registerProfiler(app, kernel, options.profiler, options)
  // `app.kernelProfiler.record()` is there in every mode: where no profiler runs it only calls its function
  if (!app.hasDecorator('kernelProfiler')) app.decorate('kernelProfiler', inactiveProfiler)
}

/**
 * The kernel as a Fastify plugin: `await app.register(kernel, { debug: true })`, anywhere among
 * the app's plugins and routes.
 */
export const kernel = fp(kernelPlugin, { fastify: '5.x', name: 'fastify-kernel' })
