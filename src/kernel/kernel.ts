import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { ResolvedKernelOptions } from '../config/options.js'
import type { StageName } from './stages.js'
import type { ListenerOptions, StageListener } from './dispatcher.js'
import { StageDispatcher } from './dispatcher.js'
import type { RouteTable } from '../routing/route-table.js'
import type { ErrorPageExtension } from './listeners/error-controller.js'
import { Redactor } from '../http/redact.js'

/** The entry points of the lifecycle (`plugins/lifecycle.ts`) that apps call into. */
export interface KernelEntryPoints {
  notFound: (request: FastifyRequest, reply: FastifyReply) => FastifyReply
  handleException: (error: unknown, request: FastifyRequest, reply: FastifyReply) => FastifyReply
  handleRejectedRequest: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => Promise<void>
}

/**
 * The public face of the kernel, decorated on the app as `app.kernel`: add stage listeners,
 * read the route table, hand a miss or an error back to the kernel from an app's own handlers.
 */
export class Kernel {
  readonly dispatcher: StageDispatcher
  readonly errorPageExtensions: ErrorPageExtension[] = []
  /** what debug pages and the profiler mask; the profiler's `redact` options replace the default */
  redactor = new Redactor()
  private entryPoints: KernelEntryPoints | undefined
  /** the app is ready: Fastify's hooks are fixed */
  ready = false

  constructor (readonly options: ResolvedKernelOptions, readonly routes: RouteTable) {
    this.dispatcher = new StageDispatcher(options.trace)
  }

  get debug (): boolean {
    return this.options.debug
  }

  /** Adds a listener to a stage; higher priority runs first (Symfony's convention). */
  on<S extends StageName> (stage: S, listener: StageListener<S>, options?: ListenerOptions): this {
    this.dispatcher.on(stage, listener, options)
    return this
  }

  /** Called once by the lifecycle when it is installed. */
  attach (entryPoints: KernelEntryPoints): void {
    this.entryPoints = entryPoints
  }

  private get lifecycle (): KernelEntryPoints {
    if (this.entryPoints === undefined) throw new Error('fastify-kernel: the kernel is not registered yet')
    return this.entryPoints
  }

  /**
   * For an app with its own not-found handler: answers the request as the kernel would, with
   * the trailing-slash redirect or the exact 404 / 405 through kernel.exception.
   * `return app.kernel.notFound(request, reply)`.
   */
  notFound (request: FastifyRequest, reply: FastifyReply): FastifyReply {
    return this.lifecycle.notFound(request, reply)
  }

  /**
   * For an app's own error handler (root or under a prefix): hands the error to kernel.exception,
   * whose listeners and error controller answer it (status, page, headers) as for any other.
   * `return app.kernel.handleException(error, request, reply)`.
   */
  handleException (error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    return this.lifecycle.handleException(error, request, reply)
  }

  /** Runs the stages for a request Fastify rejected before routing (`kernelFrameworkErrors`). */
  handleRejectedRequest (error: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    return this.lifecycle.handleRejectedRequest(error, request, reply)
  }
}
