import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { KernelOptions } from '../src/config/options.js'
import { resolveKernelOptions } from '../src/config/options.js'
import { Kernel } from '../src/kernel/kernel.js'
import { Priority, Stage } from '../src/kernel/stages.js'
import { RouteTable } from '../src/routing/route-table.js'
import type { RouteDefinition } from '../src/routing/route-table.js'
import { createRouterListener, kKernelInternalRoute, kKernelNotFound, kKernelRoute, routingFailure } from '../src/kernel/listeners/router.js'
import { createErrorController } from '../src/kernel/listeners/error-controller.js'
import { logException } from '../src/kernel/listeners/exception-logger.js'
import { disallowRobotsIndexing } from '../src/kernel/listeners/robots.js'
import { allowCspNonces } from '../src/kernel/listeners/csp-nonces.js'
import { SourceExcerpts } from '../src/errors/source-excerpt.js'
import { wholeStackTraces } from '../src/errors/stack-trace-limit.js'
import { KernelContext } from '../src/kernel/context.js'
import { HttpException } from '../src/errors/http-exceptions.js'
import { installLifecycle, sendKernelResponse } from './lifecycle.js'
import { registerKernelViews } from './views.js'
import { registerProfiler } from './profiler.js'
import { registerRequestServices, registerSession } from './request-services.js'

function controllerName (handler: unknown): string {
  return typeof handler === 'function' && handler.name !== '' ? handler.name : 'anonymous'
}

async function kernelPlugin (app: FastifyInstance, rawOptions: KernelOptions): Promise<void> {
  const options = resolveKernelOptions(rawOptions)
  const initial = app.initialConfig as Record<string, unknown> & { routerOptions?: Record<string, unknown> }
  const router = { ...initial, ...(initial.routerOptions ?? {}) }
  const routes = new RouteTable({
    caseSensitive: router.caseSensitive as boolean | undefined,
    ignoreTrailingSlash: router.ignoreTrailingSlash as boolean | undefined,
    ignoreDuplicateSlashes: router.ignoreDuplicateSlashes as boolean | undefined,
    maxParamLength: router.maxParamLength as number | undefined,
    allowUnsafeRegex: router.allowUnsafeRegex as boolean | undefined
  })

  const kernel = new Kernel(options, routes, answerMiss)
  app.decorate('kernel', kernel)
  app.decorateRequest('kernel', null)

  await registerKernelViews(app)
  const errorController = createErrorController({
    debug: options.debug,
    render: (template, model) => app.kernelView(template, model),
    extensions: kernel.errorPageExtensions,
    redactor: () => kernel.redactor,
    sources: options.debug ? new SourceExcerpts({ root: process.cwd(), fileLinkFormat: options.fileLinkFormat }) : undefined
  })
  if (options.debug) {
    const restoreStackTraceLimit = wholeStackTraces()
    app.addHook('onClose', async () => { restoreStackTraceLimit() })
  }

  kernel.on(Stage.REQUEST, createRouterListener(routes, options.debug), { priority: Priority.ROUTER, name: 'router' })
  kernel.on(Stage.EXCEPTION, logException, { priority: Priority.EXCEPTION_LOGGER, name: 'exception logger' })
  kernel.on(Stage.EXCEPTION, errorController, { priority: Priority.ERROR_CONTROLLER, name: 'error controller' })
  if (options.debug) {
    kernel.on(Stage.RESPONSE, allowCspNonces, { priority: Priority.CSP_NONCES, name: 'content security policy nonces' })
  }
  if (options.disallowRobotsIndexing) {
    kernel.on(Stage.RESPONSE, disallowRobotsIndexing, { priority: Priority.ROBOTS, name: 'disallow robots indexing' })
  }

  // The route table mirrors every route added after the kernel; HEAD twins share their GET's entry.
  const byUrl = new Map<string, RouteDefinition>()
  app.addHook('onRoute', (route) => {
    const config = (route.config ?? {}) as Record<string | symbol, unknown>
    const name = typeof config.name === 'string' ? config.name : undefined
    // the kernel's own routes (profiler) are matched but never part of the app's table: they
    // take no part in 404/405/redirect answers, and where refused they answer as if absent
    if (config[kKernelInternalRoute] === true) {
      const methods = (Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toUpperCase())
      route.config = { ...config, [kKernelRoute]: { index: -1, name: name ?? route.url, methods, url: route.url, controller: controllerName(route.handler) } } as typeof route.config
      return
    }
    let definition = routes.add(route.method, route.url, name, controllerName(route.handler))
    if (definition !== undefined) byUrl.set(route.url, definition)
    else definition = (config[kKernelRoute] as RouteDefinition | undefined) ?? byUrl.get(route.url) ?? { index: -1, name: name ?? `head_${route.url}`, methods: ['HEAD'], url: route.url, controller: controllerName(route.handler) }
    route.config = { ...config, [kKernelRoute]: definition } as typeof route.config
  })

  // before the lifecycle: @fastify/session's onRequest hook must load the session before the
  // kernel's onRequest hook runs kernel.request (session listener at 128, firewall at 8)
  const sessionCookie = await registerSession(app, kernel, options)

  installLifecycle(app, kernel, errorController)

  // optional features, each a plugin of its own wired to the kernel's stages as listeners
  await registerRequestServices(app, kernel, options, sessionCookie)
  await registerProfiler(app, kernel, options)

  if (options.notFoundHandler) {
    app.setNotFoundHandler({ config: { [kKernelNotFound]: true } } as never, function kernelNotFound (request: FastifyRequest, reply: FastifyReply) {
      return answerMiss(request, reply)
    })
  }

  /** Answers a request no route serves: the redirect, or the routing error thrown to kernel.exception. */
  function answerMiss (request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const context = request.kernel ?? (request.kernel = new KernelContext())
    if (context.redirect !== undefined) return sendKernelResponse(reply, context.redirect)
    const answer = routingFailure(routes, request, context, options.debug)
    // an app's own not-found handler: the error reaches kernel.exception through its error handler
    if (answer instanceof HttpException) throw answer
    return sendKernelResponse(reply, answer)
  }
}

/**
 * The kernel as a Fastify plugin: `await app.register(kernel, { debug: true })`, before any route.
 */
export const kernel = fp(kernelPlugin, { fastify: '5.x', name: 'fastify-kernel' })

declare module 'fastify' {
  interface FastifyInstance {
    kernel: Kernel
  }
  interface FastifyContextConfig {
    /** the route's name, Symfony's `_route` (default: made from the methods and the URL) */
    name?: string
  }
}
