import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { Kernel } from '../src/kernel/kernel.js'
import { handleException, handleRejectedRequest, notFound } from './lifecycle.js'
import type { ResolvedKernelOptions } from './kernel-options.js'

/**
 * `app.kernel`: the kernel's registry (stage listeners, route table) and the lifecycle's entry
 * points, for an app's own handlers to hand a request back to the kernel.
 */
export class FastifyKernel extends Kernel {
  /** every option resolved: the kernel's own and each configured feature's */
  declare readonly options: ResolvedKernelOptions

  /**
   * For an app with its own not-found handler: answers the request as the kernel would, with
   * the trailing-slash redirect or the exact 404 / 405 through kernel.exception.
   * `return app.kernel.notFound(request, reply)`.
   */
  notFound (request: FastifyRequest, reply: FastifyReply): FastifyReply {
    return notFound(request, reply)
  }

  /**
   * For an app's own error handler (root or under a prefix): hands the error to kernel.exception,
   * whose listeners and error controller answer it (status, page, headers) as for any other.
   * `return app.kernel.handleException(error, request, reply)`.
   */
  handleException (error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    return handleException(error, request, reply)
  }

  /** Runs the stages for a request Fastify rejected before routing (`kernelFrameworkErrors`). */
  handleRejectedRequest (error: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    return handleRejectedRequest(error, request, reply)
  }
}
