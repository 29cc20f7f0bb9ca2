/**
 * The request lifecycle: which Fastify hook runs which kernel stage, in the order a request
 * meets them (Symfony's `HttpKernel::handleRaw`).
 *
 *   onRequest           kernel.request          profiler · session · locale · router (match, or record the miss) · firewall
 *   (route onRequest)   its answer              what kernel.request decided, once every global onRequest hook ran
 *   preHandler          kernel.controller       the matched route's handler is the controller
 *                       kernel.controller_arguments   params, query, body resolved; access checks
 *   (handler)           the controller          a miss: the not-found handler raises the router's 404/405
 *   error handler       kernel.exception        log · security · error controller renders the page
 *   onSend              kernel.response         profiler token · toolbar · robots header (last)
 *   onResponse          kernel.finish_request, kernel.terminate   (onRequestAbort when the client left)
 *
 * Production pays only for what listens: a stage's Fastify hook is added only while a listener
 * needs it (`whenNeeded`). With nothing but the router on kernel.request (production's default),
 * onRequest and preHandler are left out: each route's own onRequest hook (`kernelRoutedRequest`)
 * checks what the router would refuse of a match (a Host that is no host name, an empty
 * parameter) and runs kernel.request only then; the not-found context's preParsing
 * (`kernelMissBody`) does the router's work for a miss; `request.kernel` is made when first read.
 *
 * Answers are produced where Fastify produces its own (the not-found handler, the error
 * handler, a hook after all onRequest hooks), so every other plugin's hooks (helmet, cors,
 * rate-limit, the app's) run for the kernel's answers exactly as for Fastify's.
 * Requests Fastify rejects before routing (bad URL encoding) have no hooks at all:
 * `handleRejectedRequest` runs the same stages for them by hand.
 *
 * Each hook finds the kernel as `request.server.kernel` (Fastify's `this` in hooks and handlers
 * is the same instance): the functions below are the whole lifecycle, nothing is injected.
 */
import { Readable } from 'node:stream'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RequestPayload } from 'fastify'
import { KernelContext } from '../src/kernel/context.js'
import { currentKernelContext, runInUnit } from '../src/kernel/async-context.js'
import type { Kernel } from '../src/kernel/kernel.js'
import {
  ControllerArgumentsEvent,
  ControllerEvent,
  ExceptionEvent,
  FinishRequestEvent,
  RequestEvent,
  ResponseEvent,
  TerminateEvent
} from '../src/kernel/events.js'
import type { StageEventMap } from '../src/kernel/events.js'
import { Stage } from '../src/kernel/stages.js'
import type { StageName } from '../src/kernel/stages.js'
import { lastResortResponse } from '../src/kernel/listeners/error-controller.js'
import { resolveRequestUri, routingFailure } from '../src/routing/router.js'
import { isValidHost } from '../src/routing/request-uri.js'
import { recordMatch } from '../src/kernel/listeners/router-listener.js'
import type { StageListener } from '../src/kernel/dispatcher.js'
import { HttpException, NotFoundHttpException } from '../src/errors/exceptions.js'
import { errorCodes } from '../src/errors/codes.js'
import { kKernelContext, kKernelNotFound, routeMarks } from '../src/symbols.js'
import { applyKernelResponse, replyStatusOf, sendKernelResponse } from './kernel-response.js'
import { adoptErrorHandler, installErrorHandler } from './error-handler.js'
import { installNotFoundHandler } from './not-found-handler.js'

/** A route's onRequest hook, or the not-found context's. */
type RouteRequestHook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void

/**
 * The kernel's hook in each route's own onRequest list: `kernelRequestAnswer` while
 * kernel.request has its Fastify hook, else `kernelRoutedRequest`. Fastify reads a route's
 * lists when the app gets ready: until then the kernel swaps its entry in each list it gave.
 */
export interface RouteRequestHooks {
  /** the hook a route gets now (`plugins/kernel.ts`, as each route is added) */
  current: () => RouteRequestHook
  /** a route's onRequest list holding it, swapped when kernel.request gets its hook */
  track: (list: RouteRequestHook[]) => void
}

/**
 * Installs the lifecycle's hooks on the app (the route-level ones, `kernelRequestAnswer` or
 * `kernelRoutedRequest` and the body timeout, are given to each route by `plugins/kernel.ts`).
 *
 * @param hookless kernel.request listeners whose work needs no onRequest hook (the router's)
 * @param routesBefore routes were added before the kernel: they never got a route hook of its own
 */
export function installLifecycle (app: FastifyInstance, kernel: Kernel, hookless: ReadonlySet<StageListener<any>>, routesBefore: boolean): RouteRequestHooks {
  const notFound = { onRequest: [] as RouteRequestHook[], preParsing: [kernelMissBody] }
  if (kernel.options.notFoundHandler) {
    // Fastify gives the not-found handler's own hooks to its context, as to a route's
    installNotFoundHandler(app, { config: { [kKernelNotFound]: true }, ...notFound }, kernelNotFound)
  }
  installErrorHandler(app, kernelException)
  app.addHook('onError', kernelRecordError)

  // kernel.controller / kernel.controller_arguments: preHandler, also for what kernel.request
  // decided on a route added before the kernel (it has no route hook of the kernel's)
  let controllerHooked = false
  const hookController = (): void => {
    if (controllerHooked) return
    addStageHook(kernel, Stage.CONTROLLER, () => { app.addHook('preHandler', kernelController) })
    controllerHooked = true
  }
  // kernel.request: onRequest, once a listener other than the router's needs it (or the stage
  // is traced, or trusted hosts are checked, or routes came before the kernel); until then each
  // route's own hook and the not-found context do the router's part
  const lists: RouteRequestHook[][] = []
  let requestHooked = false
  const hookRequest = (): void => {
    addStageHook(kernel, Stage.REQUEST, () => { app.addHook('onRequest', kernelRequest) })
    hookController()
    requestHooked = true
    for (const list of lists) {
      const at = list.indexOf(kernelRoutedRequest)
      if (at !== -1) list[at] = kernelRequestAnswer
    }
    notFound.onRequest.push(kernelRequestAnswer)
  }
  // an app's own not-found handler asks `app.kernel.notFound()`, which reads what kernel.request recorded
  if (kernel.options.trustedHosts.length > 0 || routesBefore || !kernel.options.notFoundHandler) hookRequest()
  else kernel.dispatcher.whenNeeded([Stage.REQUEST], hookRequest, hookless)
  kernel.dispatcher.whenNeeded([Stage.CONTROLLER, Stage.CONTROLLER_ARGUMENTS], hookController)
  // kernel.response and kernel.finish_request / kernel.terminate get their Fastify hooks only
  // once they have a listener (or are traced): a production app without any pays nothing for them
  kernel.dispatcher.whenNeeded([Stage.RESPONSE], () => {
    addStageHook(kernel, Stage.RESPONSE, () => { app.addHook('onSend', kernelResponse) })
  })
  kernel.dispatcher.whenNeeded([Stage.FINISH_REQUEST, Stage.TERMINATE], () => {
    addStageHook(kernel, Stage.TERMINATE, () => {
      app.addHook('onResponse', kernelFinish)
      app.addHook('onRequestAbort', kernelAbort)
    })
  })
  return {
    current: () => requestHooked ? kernelRequestAnswer : kernelRoutedRequest,
    track: (list) => { lists.push(list) }
  }
}

// ─── the hooks, in the order a request meets them ─────────────────────────────────────────

/** onRequest: kernel.request. Its answer waits for `kernelRequestAnswer`; a miss for the not-found handler. */
function kernelRequest (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const context = new KernelContext()
  setContext(request, context)
  adoptErrorHandler(request)
  const kernel = request.server.kernel
  if (kernel.tracksAsyncContext) {
    // a request made inside another unit of work (`app.inject()` in a job) belongs to it
    context.parent = currentKernelContext()
    runInUnit(context, () => { requestStage(kernel, request, reply, context, done) })
  } else {
    requestStage(kernel, request, reply, context, done)
  }
}

function requestStage (kernel: Kernel, request: FastifyRequest, reply: FastifyReply, context: KernelContext, done: HookHandlerDoneFunction): void {
  const event = new RequestEvent(request, reply, context)
  runStage(kernel, event, () => {
    if (event.response !== undefined) context.deferred = { response: event.response }
    done()
  }, (error) => {
    // the router's miss waits for the not-found handler; anything else for the next hook
    if (error !== context.routingError) context.deferred = { error }
    done()
  })
}

/**
 * A route's own onRequest hook: what kernel.request decided (a listener's response or error) is
 * answered here, after every global onRequest hook (other plugins' included) and before the
 * body is read. Routes registered before the kernel have none: the controller hook answers for them.
 */
function kernelRequestAnswer (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const deferred = contextOf(request)?.deferred
  if (deferred === undefined) { done(); return }
  answerDeferred(request, reply, deferred)
}

/**
 * A route's own onRequest hook while kernel.request has none (nothing but the router listens to
 * it): a match the router keeps costs two checks and no allocation; one it refuses (a Host that
 * is no host name, Symfony's default requirement refusing an empty parameter) runs kernel.request
 * here, then answers what it decided, or redirects in place of the controller.
 */
function kernelRoutedRequest (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  if (isValidHost(request.host) && !hasEmptyParameter(request.params as Record<string, string>)) { done(); return }
  kernelRequest(request, reply, () => {
    const context = contextOf(request)!
    if (context.deferred !== undefined) answerDeferred(request, reply, context.deferred)
    // the trailing-slash redirect of a refused match: kernel.controller's hook sends it when it has one
    else if (context.redirect !== undefined && !request.server.kernel.dispatcher.hooked.has(Stage.CONTROLLER)) sendKernelResponse(reply, context.redirect)
    else done()
  })
}

/**
 * The not-found handler's preParsing: as in Symfony, a request no route serves never has its
 * body read. Where kernel.request has no hook, the router's part of it is done here: the miss's
 * 404 / 405 or redirect, or the 400 of a Host that is no host name.
 */
function kernelMissBody (request: FastifyRequest, reply: FastifyReply, payload: RequestPayload, done: (error: Error | null, payload?: RequestPayload) => void): void {
  let context = contextOf(request)
  if (context === null || context.uri === undefined) {
    context ??= setContext(request, new KernelContext())
    const { uri, invalidHost } = resolveRequestUri(request)
    context.uri = uri
    if (invalidHost !== undefined) { handleException(invalidHost, request, reply); return }
    const kernel = request.server.kernel
    const { outcome, answer } = routingFailure(kernel.routes, request, uri, kernel.debug)
    context.routing = outcome
    if (answer instanceof HttpException) context.routingError = answer
    else context.redirect = answer
  }
  if (context.routingError !== undefined && hasBody(request)) done(null, Readable.from([]))
  else done(null, payload)
}

/** preHandler: kernel.controller, then kernel.controller_arguments; then the route's handler runs. */
function kernelController (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const context = request.kernel as KernelContext | null
  if (context === null || context.routingError !== undefined) { done(); return }
  if (context.deferred !== undefined) { answerDeferred(request, reply, context.deferred); return }
  // a trailing-slash redirect where Fastify routed a route the kernel refused (an empty
  // parameter): the redirect is the controller, the route's handler never runs
  const redirect = request.is404 ? undefined : context.redirect
  const proceed = redirect === undefined ? done : () => { sendKernelResponse(reply, redirect) }
  const kernel = request.server.kernel
  const stages = kernel.dispatcher
  if (stages.isIdle(Stage.CONTROLLER) && stages.isIdle(Stage.CONTROLLER_ARGUMENTS)) { proceed(); return }
  const fail = (error: unknown): void => { handleException(error, request, reply) }
  runStage(kernel, new ControllerEvent(request, reply, context), () => {
    runStage(kernel, new ControllerArgumentsEvent(request, reply, context), proceed, fail)
  }, fail)
}

/** The not-found handler: the controller of a request no route serves. */
function kernelNotFound (request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return notFound(request, reply)
}

/** The error handler: errors of the controller, and Fastify's own (body parsing, validation), go to kernel.exception. */
function kernelException (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const context = contextOf(request)
  if (context !== null && isRequestBodyError(error)) {
    // the body was read only because kernel.request's answer waits for the controller hook
    // (a route registered before the kernel): that answer comes first
    if (context.deferred !== undefined) return answerDeferred(request, reply, context.deferred)
    // a path no route serves: whatever became of its body, the answer is the routing error
    if (context.routingError !== undefined) return handleException(context.routingError, request, reply)
  }
  return handleException(error, request, reply)
}

/** onError: an app's own error handler (a prefix's) answers without the kernel; the profile still shows the error. */
function kernelRecordError (request: FastifyRequest, _reply: FastifyReply, error: FastifyError, done: () => void): void {
  const context = request.kernel as KernelContext | null
  if (context !== null && context.exception === undefined) context.exception = error
  done()
}

/** onSend: kernel.response. A failing listener must not turn a sent answer into a loop of error pages. */
function kernelResponse (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void): void {
  const context = request.kernel as KernelContext | null
  if (context === null) { done(null, payload); return }
  const event = new ResponseEvent(request, reply, context, payload)
  runStage(request.server.kernel, event, () => done(null, event.payload), (error) => {
    request.log.error({ err: error }, 'fastify-kernel: a kernel.response listener failed')
    done(null, event.payload)
  })
}

/** onResponse: kernel.finish_request, then kernel.terminate. */
function kernelFinish (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  finishRequest(request, reply, false, done)
}

/**
 * onRequestAbort: a client that goes away (or a connection time-out, which destroys the socket)
 * skips onResponse: terminate still runs, so nothing kept for the request is leaked.
 */
function kernelAbort (request: FastifyRequest, done: HookHandlerDoneFunction): void {
  finishRequest(request, null, true, done)
}

// ─── entry points: the hooks above, and an app's own handlers (app.kernel) ─────────────────

/** The not-found handler's answer: the trailing-slash redirect, or the router's 404 / 405. */
export function notFound (request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const recorded = contextOf(request)
  // no context at all: kernel.request has no hook and the not-found context's preParsing did not
  // run, so a matched route's handler called reply.callNotFound() (below)
  if (recorded === null && !request.server.kernel.dispatcher.hooked.has(Stage.REQUEST) && request.server.kernel.options.notFoundHandler) {
    return handleException(new NotFoundHttpException('Not Found'), request, reply)
  }
  const context = recorded ?? setContext(request, new KernelContext())
  if (context.redirect !== undefined) return sendKernelResponse(reply, context.redirect)
  if (context.routingError !== undefined) return handleException(context.routingError, request, reply)
  // a matched route's handler called reply.callNotFound() (@fastify/static for a missing file):
  // its own 404, which carries no router cause (Symfony: a controller's NotFoundHttpException)
  if (context.attributes._route !== undefined) return handleException(new NotFoundHttpException('Not Found'), request, reply)
  // an app's own not-found handler: the router left the miss to it, the kernel decides now
  if (context.uri === undefined) {
    const { uri, invalidHost } = resolveRequestUri(request)
    context.uri = uri
    if (invalidHost !== undefined) return handleException(invalidHost, request, reply)
  }
  const kernel = request.server.kernel
  const { outcome, answer } = routingFailure(kernel.routes, request, context.uri, kernel.debug)
  context.routing = outcome
  return answer instanceof HttpException ? handleException(answer, request, reply) : sendKernelResponse(reply, answer)
}

/**
 * kernel.exception answered by the kernel itself, as HttpKernel::handle() does, rather than
 * thrown into Fastify's error path (which costs a 404 about 40% of its throughput).
 * Synchronous when every exception listener is.
 */
export function handleException (error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const answer = exceptionBody(error, request, reply)
  if (answer instanceof Promise) {
    answer.then((body) => { reply.send(body) }, (failure: unknown) => {
      request.log.error({ err: failure }, 'fastify-kernel: answering an exception failed')
      reply.send(applyKernelResponse(reply, lastResortResponse(500, 'Internal Server Error')))
    })
    return reply
  }
  return reply.send(answer)
}

/** The same stages for a request Fastify rejected before routing; its context has no hooks. */
export async function handleRejectedRequest (error: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const stages = request.server.kernel.dispatcher
  const context = new KernelContext()
  context.forcedMiss = error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH'
  setContext(request, context)
  let payload: string | Buffer
  try {
    const event = new RequestEvent(request, reply, context)
    await stages.dispatch(event)
    if (event.hasFailed) throw event.failure
    const response = event.response ?? context.redirect
    if (response === undefined) throw error
    payload = applyKernelResponse(reply, response)
  } catch (failure) {
    payload = await exceptionBody(failure, request, reply)
  }
  const responseEvent = new ResponseEvent(request, reply, context, payload)
  await Promise.resolve(stages.dispatch(responseEvent)).catch((failure: unknown) => {
    request.log.error({ err: failure }, 'fastify-kernel: a kernel.response listener failed')
  })
  reply.raw.once('close', () => finishRequest(request, reply, !reply.raw.writableFinished, () => undefined))
  reply.send(responseEvent.payload)
}

// ─── the steps they share ─────────────────────────────────────────────────────────────────

/**
 * Runs a stage, then continues with `next`, or with `fail` and the exception a listener threw
 * or passed to `event.fail()`. No promise is created when every listener was synchronous.
 */
function runStage (kernel: Kernel, event: StageEventMap[StageName], next: () => void, fail: (error: unknown) => void): void {
  let result: void | Promise<void>
  try {
    result = kernel.dispatcher.dispatch(event)
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

/** What kernel.request decided, answered once: its listener's response, or its exception. */
function answerDeferred (request: FastifyRequest, reply: FastifyReply, deferred: NonNullable<KernelContext['deferred']>): FastifyReply {
  contextOf(request)!.deferred = undefined
  return deferred.response !== undefined ? sendKernelResponse(reply, deferred.response) : handleException(deferred.error, request, reply)
}

/** kernel.exception: listeners first, the error controller last; always ends in a response body. */
function exceptionBody (error: unknown, request: FastifyRequest, reply: FastifyReply): string | Buffer | Promise<string | Buffer> {
  const context = request.kernel as KernelContext | null ?? setContext(request, new KernelContext())
  context.exception = error
  context.replyStatus = replyStatusOf(reply)
  const event = new ExceptionEvent(request, reply, context, error)
  let dispatched: void | Promise<void>
  try {
    dispatched = request.server.kernel.dispatcher.dispatch(event)
  } catch (secondary) {
    return answerSecondary(secondary, request, reply, context)
  }
  const respond = (): string | Buffer | Promise<string | Buffer> => event.hasFailed
    ? answerSecondary(event.failure, request, reply, context)
    : applyKernelResponse(reply, event.response ?? lastResortResponse(500, 'Internal Server Error'))
  if (dispatched === undefined) return respond()
  return dispatched.then(respond, (secondary: unknown) => answerSecondary(secondary, request, reply, context))
}

/** Symfony renders the exception thrown while handling an exception; so do we (the error controller alone). */
async function answerSecondary (secondary: unknown, request: FastifyRequest, reply: FastifyReply, context: KernelContext): Promise<string | Buffer> {
  request.log.error({ err: secondary }, 'fastify-kernel: a kernel.exception listener failed')
  context.exception = secondary
  const retry = new ExceptionEvent(request, reply, context, secondary)
  await Promise.resolve(request.server.kernel.errorController(retry)).catch(() => undefined)
  return applyKernelResponse(reply, retry.response ?? lastResortResponse(500, 'Internal Server Error'))
}

/** kernel.finish_request then kernel.terminate, once per request whatever ended it. */
function finishRequest (request: FastifyRequest, reply: FastifyReply | null, aborted: boolean, done: HookHandlerDoneFunction): void {
  const context = request.kernel as KernelContext | null
  if (context === null || context.terminated) { done(); return }
  context.terminated = true
  const kernel = request.server.kernel
  const replyOrRaw = reply ?? ({ raw: request.raw } as unknown as FastifyReply)
  const logFailure = (error: unknown): void => {
    request.log.error({ err: error }, 'fastify-kernel: a finish/terminate listener failed')
    done()
  }
  runStage(kernel, new FinishRequestEvent(request, replyOrRaw, context), () => {
    runStage(kernel, new TerminateEvent(request, replyOrRaw, context, aborted), () => done(), logFailure)
  }, logFailure)
}

/**
 * Adds a stage's Fastify hook. Fastify fixes its hooks when the app is ready (and refuses new
 * ones once it starts): a stage that needs one must have its first listener before.
 */
function addStageHook (kernel: Kernel, stage: StageName, add: () => void): void {
  if (kernel.ready) throw new errorCodes.KERNEL_LATE_LISTENER(stage)
  try {
    add()
  } catch (error) {
    throw new errorCodes.KERNEL_LATE_LISTENER(stage, { cause: error })
  }
  kernel.dispatcher.hooked.add(stage)
}

/**
 * The kernel's view of the request as recorded: null until kernel.request (or the not-found
 * context, or a first read of `request.kernel`) made it.
 */
function contextOf (request: FastifyRequest): KernelContext | null {
  return (request as unknown as Record<typeof kKernelContext, KernelContext | null>)[kKernelContext]
}

function setContext (request: FastifyRequest, context: KernelContext): KernelContext {
  (request as unknown as Record<typeof kKernelContext, KernelContext | null>)[kKernelContext] = context
  return context
}

/**
 * `request.kernel`: the request's context. Where kernel.request has no hook (production, nothing
 * but the router listening to it) it is made when first read, with what the router records of
 * the match; where it has one, kernel.request makes it (null in the onRequest hooks before it).
 */
export function requestContext (this: FastifyRequest): KernelContext {
  const recorded = contextOf(this)
  if (recorded !== null) return recorded
  const kernel = this.server.kernel
  if (kernel.dispatcher.hooked.has(Stage.REQUEST)) return recorded as unknown as KernelContext
  const context = setContext(this, new KernelContext())
  const options = this.routeOptions
  if (routeMarks(options.config)[kKernelNotFound] !== true && options.url !== undefined) {
    context.uri = resolveRequestUri(this).uri
    recordMatch(kernel.routes, context, options, this.params as Record<string, string>)
  }
  return context
}

/** Some parameter of the match is empty (most matches: none, and no further check). */
function hasEmptyParameter (params: Record<string, string> | undefined): boolean {
  for (const name in params) if (params[name] === '') return true
  return false
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
