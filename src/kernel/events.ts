import type { FastifyReply, FastifyRequest } from 'fastify'
import type { StageName } from './stages.js'
import { Stage } from './stages.js'
import type { KernelContext } from './context.js'
import type { KernelResponse } from '../http/response.js'
import { statusOf } from '../errors/flatten.js'

export abstract class KernelEvent {
  abstract readonly stage: StageName
  private stopped = false
  private failed = false
  private failureValue: unknown

  constructor (
    readonly request: FastifyRequest,
    readonly reply: FastifyReply,
    readonly context: KernelContext
  ) {}

  /** Later listeners of this stage do not run. */
  stopPropagation (): void {
    this.stopped = true
  }

  get isPropagationStopped (): boolean {
    return this.stopped
  }

  /**
   * Fails the stage with this exception exactly as throwing it would: later listeners do not
   * run and the exception goes to kernel.exception. For hot paths (the router's misses): Node
   * has V8 record a stack for every throw, whatever `Error.stackTraceLimit` says, which costs
   * a 404 several microseconds. Any listener may simply throw instead.
   */
  fail (error: unknown): void {
    this.failed = true
    this.failureValue = error
    this.stopPropagation()
  }

  /** True when a listener called `fail()`. */
  get hasFailed (): boolean {
    return this.failed
  }

  get failure (): unknown {
    return this.failureValue
  }
}

/** An event on which a listener may answer the request instead of the controller. */
abstract class ResponseSettingEvent extends KernelEvent {
  private answer: KernelResponse | undefined

  get response (): KernelResponse | undefined {
    return this.answer
  }

  /** Answers the request with this response; stops propagation as Symfony does. */
  setResponse (response: KernelResponse): void {
    this.answer = response
    this.stopPropagation()
  }
}

export class RequestEvent extends ResponseSettingEvent {
  readonly stage = Stage.REQUEST
}

export class ControllerEvent extends KernelEvent {
  readonly stage = Stage.CONTROLLER
  /** a readable name of the handler that will run (`_controller`) */
  get controller (): string {
    return String(this.context.attributes._controller ?? '')
  }
}

export interface ControllerArguments {
  params: unknown
  query: unknown
  body: unknown
}

export class ControllerArgumentsEvent extends KernelEvent {
  readonly stage = Stage.CONTROLLER_ARGUMENTS
  get arguments (): ControllerArguments {
    return { params: this.request.params, query: this.request.query, body: this.request.body }
  }
}

export class ExceptionEvent extends ResponseSettingEvent {
  readonly stage = Stage.EXCEPTION
  constructor (request: FastifyRequest, reply: FastifyReply, context: KernelContext, public error: unknown) {
    super(request, reply, context)
  }

  /**
   * The status the exception answers with, by Fastify's rule: its own (an HttpException's, a
   * 4xx/5xx `statusCode` or `status`), else the 4xx/5xx the app set on the reply before it, else 500.
   */
  get statusCode (): number {
    return statusOf(this.error, this.context.replyStatus)
  }
}

export class ResponseEvent extends KernelEvent {
  readonly stage = Stage.RESPONSE
  constructor (request: FastifyRequest, reply: FastifyReply, context: KernelContext, public payload: unknown) {
    super(request, reply, context)
  }
}

export class FinishRequestEvent extends KernelEvent {
  readonly stage = Stage.FINISH_REQUEST
}

export class TerminateEvent extends KernelEvent {
  readonly stage = Stage.TERMINATE
  /** true when the response was not fully sent (client went away, time-out) */
  constructor (request: FastifyRequest, reply: FastifyReply, context: KernelContext, readonly aborted: boolean) {
    super(request, reply, context)
  }
}

export interface StageEventMap {
  'kernel.request': RequestEvent
  'kernel.controller': ControllerEvent
  'kernel.controller_arguments': ControllerArgumentsEvent
  'kernel.exception': ExceptionEvent
  'kernel.response': ResponseEvent
  'kernel.finish_request': FinishRequestEvent
  'kernel.terminate': TerminateEvent
}
