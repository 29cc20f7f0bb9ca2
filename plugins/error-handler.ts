import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errorCodes } from '../src/errors/codes.js'

type ErrorHandler = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => unknown

/**
 * Fastify's flag saying an error handler was set in a scope (its FSTWRN004 warning, or with
 * `allowErrorHandlerOverride: false` its refusal, comes from it). Found by its description:
 * Fastify keeps it on each instance as an own symbol property.
 */
function alreadySetFlag (app: FastifyInstance): symbol | undefined {
  return ownSymbol(app, 'fastify.errorHandlerAlreadySet')
}

function ownSymbol (target: object, description: string): symbol | undefined {
  return Object.getOwnPropertySymbols(target).find((symbol) => symbol.description === description)
}

/** Fastify's error handler chain of a scope, or of a route: `func` and the chain below it as prototype. */
interface HandlerChain { func: ErrorHandler }

/** The root scope's chain once the app is ready (the kernel's, with the app's own on top). */
const readyChains = new WeakMap<object, HandlerChain>()
/** The root scope's chain before the kernel, when the app had set its own handler (the app's over Fastify's default). */
const earlierChains = new WeakMap<object, HandlerChain>()
/** Fastify's own default, shared by every instance: the bottom of every chain. */
let fastifyDefault: HandlerChain | undefined
/** Fastify's symbol of a request's route context, found on the first request. */
let contextSymbol: symbol | undefined

/**
 * Routes registered before the kernel keep the error handler of the moment they were added,
 * Fastify's default (or the app's own over it, set before them): from their first request on
 * they answer through the app's chain as it is once ready (the kernel's handler, the app's own
 * on top of it), as every later route does. A route with a handler of its own (its scope's or
 * its options') keeps it.
 */
export function adoptErrorHandler (request: FastifyRequest): void {
  contextSymbol ??= ownSymbol(request, 'fastify.context')
  if (contextSymbol === undefined || fastifyDefault === undefined) return
  const context = (request as unknown as Record<symbol, { errorHandler?: HandlerChain } | undefined>)[contextSymbol]
  const present = context?.errorHandler
  if (present === undefined || (present !== fastifyDefault && present !== earlierChains.get(request.server.kernel))) return
  const chain = readyChains.get(request.server.kernel)
  if (chain !== undefined) context!.errorHandler = chain
}

/**
 * Installs the kernel's error handler so that the app's own, set before or after, keeps
 * answering: Fastify chains error handlers, a handler that throws or sends an error hands it to
 * the one set before it. The kernel's goes below the app's (an app handler set before the kernel
 * loaded is put back on top of it), and the scope is left as if the app had set nothing, so an
 * app handler set later goes on top without Fastify's warning. Never a silent replacement.
 */
export function installErrorHandler (app: FastifyInstance, kernelHandler: ErrorHandler): void {
  const present = app.errorHandler as ErrorHandler
  // Fastify's default is one shared function (not bound): anything else is the app's
  const appHandler = present.name === 'defaultErrorHandler' ? undefined : present
  const flag = alreadySetFlag(app)
  const scope = app as unknown as Record<symbol, unknown>
  if (flag === undefined && appHandler !== undefined) {
    throw new errorCodes.KERNEL_ERROR_HANDLER_ORDER('the app set its error handler before the kernel was registered, and this Fastify version does not let the kernel keep it. Register the kernel first (`await app.register(kernel)`), then call `app.setErrorHandler()`; hand errors back with `app.kernel.handleException(error, request, reply)`.')
  }
  if (flag !== undefined) scope[flag] = false
  const chainSymbol = ownSymbol(app, 'fastify.errorHandler') ?? ownSymbol(Object.getPrototypeOf(app) as object, 'fastify.errorHandler')
  const earlier = chainSymbol === undefined || appHandler === undefined ? undefined : scope[chainSymbol] as HandlerChain
  try {
    app.setErrorHandler(kernelHandler)
    if (appHandler !== undefined) {
      if (flag !== undefined) scope[flag] = false
      app.setErrorHandler(appHandler)
    }
  } catch (error) {
    throw new errorCodes.KERNEL_ERROR_HANDLER_ORDER(`the kernel could not install its error handler (${(error as Error).message}). Register the kernel before calling \`app.setErrorHandler()\`.`, { cause: error })
  }
  if (flag !== undefined) scope[flag] = false
  if (chainSymbol === undefined) return
  app.addHook('onReady', async () => {
    const chain = scope[chainSymbol] as HandlerChain
    let bottom = chain
    while (Object.getPrototypeOf(bottom) !== Object.prototype && Object.getPrototypeOf(bottom) !== null) bottom = Object.getPrototypeOf(bottom) as HandlerChain
    fastifyDefault ??= bottom
    readyChains.set(app.kernel, chain)
    if (earlier !== undefined && earlier.func === appHandler) earlierChains.set(app.kernel, earlier)
  })
}
