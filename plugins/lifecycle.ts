/**
 * The request lifecycle: which Fastify hook runs which kernel stage.
 *
 *   onRequest       kernel.request          session · locale · router (match, or record the miss) · firewall
 *   (route onRequest) (answer)              what kernel.request decided, once every global onRequest hook ran
 *   preHandler      kernel.controller       the matched route's handler is the controller
 *                   kernel.controller_arguments   params, query, body resolved; access checks
 *   (handler)       the controller          a miss: the not-found handler raises the router's 404/405
 *   error handler   kernel.exception        log · security · error controller renders the page
 *   onSend          kernel.response         profiler token · robots header (last)
 *   onResponse      kernel.finish_request, kernel.terminate   (onRequestAbort when the client left)
 *
 * Answers are produced where Fastify produces its own (the not-found handler, the error
 * handler, a hook after all onRequest hooks), so every other plugin's hooks (helmet, cors,
 * rate-limit, the app's) run for the kernel's answers exactly as for Fastify's.
 * Requests Fastify rejects before routing (bad URL encoding) have no hooks at all:
 * `handleRejectedRequest` runs the same stages for them by hand.
 */
import { Readable } from 'node:stream'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RequestPayload } from 'fastify'
import vary from 'vary'
import { KernelContext } from '../src/kernel/context.js'
import type { Kernel } from '../src/kernel/kernel.js'
import type { StageEventMap } from '../src/kernel/events.js'
import type { KernelResponse } from '../src/http/response.js'
import {
  ControllerArgumentsEvent,
  ControllerEvent,
  ExceptionEvent,
  FinishRequestEvent,
  RequestEvent,
  ResponseEvent,
  TerminateEvent
} from '../src/kernel/events.js'
import { lastResortResponse } from '../src/kernel/listeners/error-controller.js'
import { resolveRequestUri, routingFailure } from '../src/routing/router.js'
import { HttpException } from '../src/errors/http-exceptions.js'
import { KernelError } from '../src/errors/kernel-errors.js'
import { Stage } from '../src/kernel/stages.js'
import type { StageName } from '../src/kernel/stages.js'
import type { StageDispatcher } from '../src/kernel/dispatcher.js'

type AnyStageEvent = StageEventMap[StageName]

/**
 * Runs a stage, then continues with `next`, or with `fail` and the exception a listener threw
 * or passed to `event.fail()`. No promise is created when every listener was synchronous.
 */
function runStage (stages: StageDispatcher, event: AnyStageEvent, next: () => void, fail: (error: unknown) => void): void {
  let result: void | Promise<void>
  try {
    result = stages.dispatch(event)
  } catch (error) {
    fail(error)
    return
  }
  const settle = (): void => {
    if (event.hasFailed) fail(event.failure)
    else next()
  }
  if (result === undefined) settle()
  else result.then(settle, fail)
}

/**
 * Sets status and headers of a kernel response on the reply, merged with what other plugins
 * set before (helmet, cors, rate-limit keep their headers; `Vary` is appended to, never
 * replaced), and gives back the body to send: a Buffer when the content type has no charset,
 * since Fastify appends one to string bodies (Symfony sends `application/json` as it is).
 */
function applyKernelResponse (reply: FastifyReply, response: KernelResponse): string | Buffer {
  reply.removeHeader('content-length')
  reply.code(response.statusCode)
  const headers = response.headers
  for (const name in headers) {
    if (name === 'Vary' || name.toLowerCase() === 'vary') {
      const present = reply.getHeader('vary')
      reply.header('vary', present === undefined ? headers[name] : vary.append(String(present), headers[name]))
    } else reply.header(name, headers[name])
  }
  reply.header('content-type', response.contentType)
  return response.contentType.includes('charset=') ? response.body : Buffer.from(response.body)
}

function sendKernelResponse (reply: FastifyReply, response: KernelResponse): FastifyReply {
  return reply.send(applyKernelResponse(reply, response))
}

/** Fastify fixes its hooks when the app is ready: a stage that needs one must have its first listener before. */
function assertNotReady (kernel: Kernel, stage: StageName): void {
  if (kernel.ready) {
    throw new KernelError('KERNEL_LATE_LISTENER', `fastify-kernel: the first "${stage}" listener was added after the app was ready; Fastify fixes its hooks at ready, so add it before (with debug or trace on, every stage is ready for listeners at any time).`)
  }
}

/** Fastify's own errors about a body it could not read or parse (`FST_ERR_CTP_*`). */
function isRequestBodyError (error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && code.startsWith('FST_ERR_CTP_')
}

function hasBody (request: FastifyRequest): boolean {
  const length = request.headers['content-length']
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined
}

export function installLifecycle (app: FastifyInstance, kernel: Kernel, errorController: (event: ExceptionEvent) => void | Promise<void>): LifecycleRouteHooks {
  const stages = kernel.dispatcher

  app.addHook('onRequest', function kernelRequest (request, reply, done) {
    const context = new KernelContext()
    request.kernel = context
    const event = new RequestEvent(request, reply, context)
    runStage(stages, event, () => {
      if (event.response !== undefined) context.deferred = { response: event.response }
      done()
    }, (error) => {
      // the router's miss waits for the not-found handler; anything else for the next hook
      if (error !== context.routingError) context.deferred = { error }
      done()
    })
  })

  /**
   * What kernel.request decided (a listener's response or error) is answered here: a hook each
   * route gets (`routeHooks`), so it runs after every global onRequest hook, other plugins'
   * included, and before the body is read. Routes registered before the kernel have no route
   * hook of the kernel's: the controller hook answers for them.
   */
  function kernelRequestAnswer (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const deferred = request.kernel?.deferred
    if (deferred === undefined) { done(); return }
    answerDeferred(request, reply, deferred)
  }

  function answerDeferred (request: FastifyRequest, reply: FastifyReply, deferred: NonNullable<KernelContext['deferred']>): void {
    request.kernel!.deferred = undefined
    if (deferred.response !== undefined) sendKernelResponse(reply, deferred.response)
    else answerException(deferred.error, request, reply)
  }

  /** The not-found handler's: as in Symfony, a request no route serves never has its body read. */
  function kernelMissBody (request: FastifyRequest, _reply: FastifyReply, payload: RequestPayload, done: (error: Error | null, payload?: RequestPayload) => void): void {
    if (request.kernel?.routingError !== undefined && hasBody(request)) done(null, Readable.from([]))
    else done(null, payload)
  }

  app.addHook('preHandler', function kernelController (request, reply, done) {
    const context = request.kernel
    if (context === null || context.routingError !== undefined) { done(); return }
    if (context.deferred !== undefined) { answerDeferred(request, reply, context.deferred); return }
    // a trailing-slash redirect where Fastify routed a route the kernel refused (an empty
    // parameter): the redirect is the controller, the route's handler never runs
    const redirect = request.is404 ? undefined : context.redirect
    const proceed = redirect === undefined ? done : () => { sendKernelResponse(reply, redirect) }
    if (stages.isIdle(Stage.CONTROLLER) && stages.isIdle(Stage.CONTROLLER_ARGUMENTS)) { proceed(); return }
    const fail = (error: unknown): void => { answerException(error, request, reply) }
    runStage(stages, new ControllerEvent(request, reply, context), () => {
      runStage(stages, new ControllerArgumentsEvent(request, reply, context), proceed, fail)
    }, fail)
  })

  // errors of the controller (and of Fastify itself: body parsing, validation) arrive here
  app.setErrorHandler(function kernelException (error: FastifyError, request, reply) {
    const context = request.kernel
    if (context !== null && isRequestBodyError(error)) {
      // the body was read only because kernel.request's answer waits for the controller hook
      // (a route registered before the kernel): that answer comes first
      if (context.deferred !== undefined) { answerDeferred(request, reply, context.deferred); return }
      // a path no route serves: whatever became of its body, the answer is the routing error
      if (context.routingError !== undefined) { answerException(context.routingError, request, reply); return }
    }
    answerException(error, request, reply)
  })

  // an app's own error handler (a prefix's) answers without the kernel: the profile still shows the error
  app.addHook('onError', function kernelRecordError (request, _reply, error, done) {
    if (request.kernel !== null && request.kernel.exception === undefined) request.kernel.exception = error
    done()
  })

  // kernel.response and kernel.finish_request / kernel.terminate get their Fastify hooks only
  // once they have a listener (or are traced): a production app without any pays nothing for them
  stages.whenNeeded([Stage.RESPONSE], () => {
    assertNotReady(kernel, Stage.RESPONSE)
    app.addHook('onSend', function kernelResponse (request, reply, payload, done) {
      const context = request.kernel
      if (context === null) { done(null, payload); return }
      const event = new ResponseEvent(request, reply, context, payload)
      // a failing response listener must not turn a sent answer into a loop of error pages
      runStage(stages, event, () => done(null, event.payload), (error) => {
        request.log.error({ err: error }, 'fastify-kernel: a kernel.response listener failed')
        done(null, event.payload)
      })
    })
  })

  stages.whenNeeded([Stage.FINISH_REQUEST, Stage.TERMINATE], () => {
    assertNotReady(kernel, Stage.TERMINATE)
    app.addHook('onResponse', function kernelFinish (request, reply, done) {
      finishRequest(request, reply, false, done)
    })
    // a client that goes away (or a connection time-out, which destroys the socket) skips
    // onResponse: terminate still runs, so nothing kept for the request is leaked
    app.addHook('onRequestAbort', function kernelAbort (request, done) {
      finishRequest(request, null, true, done)
    })
  })

  /**
   * kernel.exception answered by the kernel itself, as HttpKernel::handle() does, rather than
   * thrown into Fastify's error path (which costs a 404 about 40% of its throughput).
   * Synchronous when every exception listener is.
   */
  function answerException (error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const answer = handleException(error, request, reply)
    if (answer instanceof Promise) {
      answer.then((body) => { reply.send(body) }, (failure: unknown) => {
        request.log.error({ err: failure }, 'fastify-kernel: answering an exception failed')
        reply.send(applyKernelResponse(reply, lastResortResponse(500, 'Internal Server Error')))
      })
      return reply
    }
    return reply.send(answer)
  }

  /** kernel.exception: listeners first, the error controller last; always ends in a response body. */
  function handleException (error: unknown, request: FastifyRequest, reply: FastifyReply): string | Buffer | Promise<string | Buffer> {
    const context = request.kernel ?? (request.kernel = new KernelContext())
    context.exception = error
    const event = new ExceptionEvent(request, reply, context, error)
    let dispatched: void | Promise<void>
    try {
      dispatched = stages.dispatch(event)
    } catch (secondary) {
      return answerSecondary(secondary, request, reply, context)
    }
    const respond = (): string | Buffer | Promise<string | Buffer> => event.hasFailed
      ? answerSecondary(event.failure, request, reply, context)
      : applyKernelResponse(reply, event.response ?? lastResortResponse(500, 'Internal Server Error'))
    if (dispatched === undefined) return respond()
    return dispatched.then(respond, (secondary: unknown) => answerSecondary(secondary, request, reply, context))
  }

  /** Symfony renders the exception thrown while handling an exception; so do we. */
  async function answerSecondary (secondary: unknown, request: FastifyRequest, reply: FastifyReply, context: KernelContext): Promise<string | Buffer> {
    request.log.error({ err: secondary }, 'fastify-kernel: a kernel.exception listener failed')
    context.exception = secondary
    const retry = new ExceptionEvent(request, reply, context, secondary)
    await Promise.resolve(errorController(retry)).catch(() => undefined)
    return applyKernelResponse(reply, retry.response ?? lastResortResponse(500, 'Internal Server Error'))
  }

  /** The not-found handler: the trailing-slash redirect, or the router's 404 / 405. */
  function notFound (request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const context = request.kernel ?? (request.kernel = new KernelContext())
    if (context.redirect !== undefined) return sendKernelResponse(reply, context.redirect)
    if (context.routingError !== undefined) return answerException(context.routingError, request, reply)
    // an app's own not-found handler: the router left the miss to it, the kernel decides now
    if (context.uri === undefined) {
      const { uri, invalidHost } = resolveRequestUri(request)
      context.uri = uri
      if (invalidHost !== undefined) return answerException(invalidHost, request, reply)
    }
    const { outcome, answer } = routingFailure(kernel.routes, request, context.uri, kernel.debug)
    context.routing = outcome
    return answer instanceof HttpException ? answerException(answer, request, reply) : sendKernelResponse(reply, answer)
  }

  /** kernel.finish_request then kernel.terminate, once per request whatever ended it. */
  function finishRequest (request: FastifyRequest, reply: FastifyReply | null, aborted: boolean, done: HookHandlerDoneFunction): void {
    const context = request.kernel
    if (context === null || context.terminated) { done(); return }
    context.terminated = true
    const replyOrRaw = reply ?? ({ raw: request.raw } as unknown as FastifyReply)
    const logFailure = (error: unknown): void => {
      request.log.error({ err: error }, 'fastify-kernel: a finish/terminate listener failed')
      done()
    }
    runStage(stages, new FinishRequestEvent(request, replyOrRaw, context), () => {
      runStage(stages, new TerminateEvent(request, replyOrRaw, context, aborted), () => done(), logFailure)
    }, logFailure)
  }

  /** The same stages for a request Fastify rejected before routing; its context has no hooks. */
  async function handleRejectedRequest (error: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const context = new KernelContext()
    context.forcedMiss = error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH'
    request.kernel = context
    let payload: string | Buffer
    try {
      const event = new RequestEvent(request, reply, context)
      await stages.dispatch(event)
      if (event.hasFailed) throw event.failure
      const response = event.response ?? context.redirect
      if (response === undefined) throw error
      payload = applyKernelResponse(reply, response)
    } catch (failure) {
      payload = await handleException(failure, request, reply)
    }
    const responseEvent = new ResponseEvent(request, reply, context, payload)
    await Promise.resolve(stages.dispatch(responseEvent)).catch((failure: unknown) => {
      request.log.error({ err: failure }, 'fastify-kernel: a kernel.response listener failed')
    })
    reply.raw.once('close', () => finishRequest(request, reply, !reply.raw.writableFinished, () => undefined))
    reply.send(responseEvent.payload)
  }

  kernel.attach({ notFound, handleException: answerException, handleRejectedRequest })
  return { onRequest: kernelRequestAnswer, missBody: kernelMissBody }
}

/** The hooks the lifecycle gives each route (and the not-found handler) rather than every request. */
export interface LifecycleRouteHooks {
  onRequest: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void
  missBody: (request: FastifyRequest, reply: FastifyReply, payload: RequestPayload, done: (error: Error | null, payload?: RequestPayload) => void) => void
}
