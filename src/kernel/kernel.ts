import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { ResolvedKernelOptions } from '../config/options.js'
import type { StageName } from './stages.js'
import type { ListenerOptions, StageListener } from './dispatcher.js'
import { StageDispatcher } from './dispatcher.js'
import type { RouteTable } from '../routing/route-table.js'
import type { ErrorPageExtension } from './listeners/error-controller.js'
import { Redactor } from '../http/redact.js'

/**
 * The public face of the kernel, decorated on the app as `app.kernel`: add stage listeners,
 * read the route table, answer a miss from an app's own not-found handler.
 */
export class Kernel {
  readonly dispatcher: StageDispatcher
  readonly errorPageExtensions: ErrorPageExtension[] = []
  /** what debug pages and the profiler mask; the profiler's `redact` options replace the default */
  redactor = new Redactor()

  /** Runs the stages for a request Fastify rejected before routing; installed by the lifecycle. */
  handleRejectedRequest: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => Promise<void> = async (error, _request, reply) => {
    reply.code(error.statusCode ?? 400).send(error.message)
  }

  constructor (
    readonly options: ResolvedKernelOptions,
    readonly routes: RouteTable,
    private readonly answerMiss: (request: FastifyRequest, reply: FastifyReply) => FastifyReply
  ) {
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

  /**
   * For an app with its own not-found handler (`notFoundHandler: false`): answers the request
   * as the kernel would: sends the trailing-slash redirect, or throws the exact 404 / 405 error
   * (which reaches kernel.exception like any error). `return app.kernel.notFound(request, reply)`.
   */
  notFound (request: FastifyRequest, reply: FastifyReply): FastifyReply {
    return this.answerMiss(request, reply)
  }
}
