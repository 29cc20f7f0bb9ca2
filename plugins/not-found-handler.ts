import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errorCodes } from '../src/errors/codes.js'

type NotFoundHandler = (request: FastifyRequest, reply: FastifyReply) => FastifyReply

const ADVICE = 'register the kernel with `notFoundHandler: false` to keep the app\'s own, and answer the misses it leaves with `return app.kernel.notFound(request, reply)` (a scope with a prefix of its own may have its own handler either way)'

/**
 * Installs the kernel's not-found handler. Fastify has one per prefix, and refuses a second one
 * with a generic "Not found handler already set": an app that sets its own where the kernel's
 * is (at the root, or in a child scope without a prefix of its own), before or after the kernel,
 * fails at start with `KERNEL_NOT_FOUND_HANDLER_SET`, which names the option to use instead.
 * Every other call of `setNotFoundHandler` is Fastify's, untouched.
 */
export function installNotFoundHandler (app: FastifyInstance, options: object, handler: NotFoundHandler): void {
  try {
    app.setNotFoundHandler(options as never, handler)
  } catch (error) {
    throw new errorCodes.KERNEL_NOT_FOUND_HANDLER_SET(`the app set its own not-found handler before the kernel was registered (${(error as Error).message}): ${ADVICE}.`, { cause: error })
  }
  const prefix = app.prefix
  const fastifys = app.setNotFoundHandler
  const guarded = function (this: FastifyInstance, ...args: Parameters<FastifyInstance['setNotFoundHandler']>): FastifyInstance {
    try {
      return (fastifys as (...args: unknown[]) => FastifyInstance).apply(this, args)
    } catch (error) {
      // Fastify's refusal has no code (its other one, after start, has): a second handler for the kernel's prefix
      if ((error as { code?: unknown }).code !== undefined || this.prefix !== prefix) throw error
      throw new errorCodes.KERNEL_NOT_FOUND_HANDLER_SET(`the app sets its own not-found handler where the kernel's answers (${(error as Error).message}): ${ADVICE}.`, { cause: error })
    }
  }
  // children inherit the root's methods: scopes registered before the kernel call this one too
  ;(app as unknown as { setNotFoundHandler: typeof guarded }).setNotFoundHandler = guarded
}
