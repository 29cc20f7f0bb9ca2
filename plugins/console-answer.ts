/**
 * The kernel's own answer to `METHOD path` (Symfony's `router:match`), obtained by running the
 * request through the app (Fastify's router, then kernel.request: router, locale) and stopping
 * it before the firewall and any controller: nothing of the app runs but routing, and the
 * request is left out of the profiler's profiles.
 */
import { randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import type { FastifyRequest } from 'fastify'
import type { FastifyKernel } from './fastify-kernel.js'
import type { FastifyInstance } from 'fastify'
import { Priority, Stage } from '../src/kernel/stages.js'
import type { KernelContext } from '../src/kernel/context.js'
import { splitRequestTarget } from '../src/routing/request-uri.js'
import { statusOf, statusText } from '../src/errors/flatten.js'
import { HttpException } from '../src/errors/exceptions.js'
import type { RoutingData } from '../src/routing/trace.js'
import { routingOutcomeText, routingSummary, traceRoutes } from '../src/routing/trace.js'
import type { RouteTraceLine } from '../src/routing/trace.js'
import { kKernelRoute, routeMarks } from '../src/symbols.js'
import { pathWithRequirements } from '../src/routing/route-list.js'

export interface KernelAnswer {
  method: string
  /** the absolute URL as the kernel computed it (scheme, host, raw path, query) */
  url: string
  /** `matched` when a controller would run; otherwise what the kernel answers instead */
  outcome: 'matched' | 'redirect' | 'not-found' | 'method-not-allowed' | 'error'
  /** the status the kernel answers with; null for a match (the controller decides) */
  status: number | null
  statusText: string | null
  /** the route matched, or the redirect's target; `path` in Symfony's notation, `url` as registered */
  route: (NonNullable<RoutingData['route']> & { path: string }) | null
  location: string | null
  allow: string[]
  /** the exception's message and its cause's, for an error answer */
  message: string | null
  cause: string | null
  /** the routing panel's sentence */
  summary: string
  /** every route of the table and why it did or did not match: the routing panel's trace */
  trace: RouteTraceLine[]
}

const MARK = 'x-fastify-kernel-console'

/**
 * Fastify's own injection library (what `app.inject` calls), taken from Fastify's dependencies
 * rather than the kernel's: it is always there beside Fastify, and its current versions need a
 * newer Node than the kernel supports, for a part (cookies) the console does not use.
 */
function fastifysInject (): typeof import('light-my-request') {
  const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'))
  return fromFastify('light-my-request') as typeof import('light-my-request')
}

interface Captured { request: FastifyRequest, context: KernelContext }

/**
 * The console's listeners, for the requests carrying `mark`: one records their context, one
 * stops them before the firewall (priority 8), one drops their profile.
 */
function captureConsoleRequests (app: FastifyInstance, kernel: FastifyKernel, mark: string): { take: () => Captured | undefined } {
  let captured: Captured | undefined
  const ours = (request: FastifyRequest): boolean => request.headers[MARK] === mark
  kernel.on(Stage.REQUEST, (event) => {
    if (ours(event.request)) captured = { request: event.request, context: event.context }
  }, { priority: Number.MAX_SAFE_INTEGER, name: 'routing console: capture' })
  kernel.on(Stage.REQUEST, (event) => {
    if (ours(event.request)) event.setResponse({ statusCode: 204, headers: {}, contentType: 'text/plain; charset=utf-8', body: '' })
  }, { priority: Priority.FIREWALL + 1, name: 'routing console: stop before the firewall' })
  // only a debug app profiles (and its every stage is open to listeners after ready)
  if (app.kernelProfiler?.enabled === true) {
    kernel.on(Stage.TERMINATE, (event) => {
      // the profiler's recording, by its state slot: the console's requests are not the app's traffic
      if (ours(event.request)) event.context.delete('profiler')
    }, { priority: Priority.PROFILE_SAVE + 1, name: 'routing console: not profiled' })
  }
  return { take: () => captured }
}

/** The answer, its URLs masked by the kernel's redaction policy as its logs and pages are (`?token=******`). */
export async function kernelAnswer (app: FastifyInstance, kernel: FastifyKernel, method: string, target: string, host: string): Promise<KernelAnswer> {
  const answer = await unmaskedAnswer(app, kernel, method, target, host)
  const redactor = kernel.redactor
  return { ...answer, url: redactor.url(answer.url), location: answer.location === null ? null : redactor.url(answer.location) }
}

async function unmaskedAnswer (app: FastifyInstance, kernel: FastifyKernel, method: string, target: string, host: string): Promise<KernelAnswer> {
  const mark = randomBytes(8).toString('hex')
  const capture = captureConsoleRequests(app, kernel, mark)
  // light-my-request normalises the URL it is given (`/a/../b` → `/b`): the raw target is put
  // back before Fastify's router sees it, as a socket would deliver it
  const inject = fastifysInject()
  const response = await inject((req, res) => {
    req.url = target
    app.routing(req, res)
  }, { method: method as never, url: '/', headers: { host, [MARK]: mark } })
  const captured = capture.take()
  const table = kernel.routes.routes
  if (captured === undefined) {
    // another plugin's onRequest hook answered before the kernel's stages ran
    const none: RoutingData = { outcome: 'none', route: null, redirect: null, allow: [], attemptedPath: null, trace: null }
    return answerOf(method, target, { outcome: 'error', status: response.statusCode, message: 'the request was answered before the kernel.request stage' }, routingOutcomeText(none), traceRoutes(table, method, splitRequestTarget(target).path))
  }
  const { request, context } = captured
  const matched = routeMarks(request.routeOptions.config)[kKernelRoute]
  const routing = routingSummary(context, matched, () => context.uri === undefined ? null : traceRoutes(table, method, context.uri.path))
  const trace = routing.trace ?? traceRoutes(table, method, context.uri?.path ?? splitRequestTarget(target).path)
  const url = context.requestUrl(target)
  const summary = routingOutcomeText(routing)
  const error = context.exception
  if (error !== undefined) {
    const allow = error instanceof HttpException && error.headers.Allow !== undefined ? error.headers.Allow.split(', ') : []
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : null
    const outcome = routing.outcome === 'not-found' || routing.outcome === 'method-not-allowed' ? routing.outcome : 'error'
    return answerOf(method, url, { outcome, status: statusOf(error), allow, message: error instanceof Error ? error.message : String(error), cause }, summary, trace)
  }
  if (context.redirect !== undefined) {
    const target = table.find((route) => route.name === context.attributes._route)
    const route = target === undefined ? null : withPath({ name: target.name, url: target.url, methods: target.methods, controller: target.controller, params: { ...(context.attributes._route_params ?? {}) } })
    return answerOf(method, url, { outcome: 'redirect', status: 301, route, location: context.redirect.headers.Location ?? null }, summary, trace)
  }
  return answerOf(method, url, { outcome: 'matched', route: routing.route === null ? null : withPath(routing.route) }, summary, trace)
}

function withPath (route: NonNullable<RoutingData['route']>): NonNullable<KernelAnswer['route']> {
  return { ...route, path: pathWithRequirements(route.url).path }
}

type Decision = Pick<KernelAnswer, 'outcome'> & Partial<Pick<KernelAnswer, 'status' | 'route' | 'location' | 'allow' | 'message' | 'cause'>>

/** The answer with every field present, in reading order (the trace last). */
function answerOf (method: string, url: string, decision: Decision, summary: string, trace: RouteTraceLine[]): KernelAnswer {
  const status = decision.status ?? null
  return {
    method,
    url,
    outcome: decision.outcome,
    status,
    statusText: status === null ? null : statusText(status),
    route: decision.route ?? null,
    location: decision.location ?? null,
    allow: decision.allow ?? [],
    message: decision.message ?? null,
    cause: decision.cause ?? null,
    summary,
    trace
  }
}
