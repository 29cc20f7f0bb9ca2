import type { FastifyReply, FastifyRequest } from 'fastify'
import type { KernelContext } from '../kernel/context.js'
import type { RequestSnapshot } from '../kernel/collector.js'
import { requestScheme } from '../routing/request-uri.js'
import type { ExceptionEvent, RequestEvent, ResponseEvent, TerminateEvent } from '../kernel/events.js'
import type { Kernel } from '../kernel/kernel.js'
import { Priority, Stage } from '../kernel/stages.js'
import { subscription } from '../kernel/dispatcher.js'
import type { AnySubscription } from '../kernel/dispatcher.js'
import { kProfilerRoute, routeMarks } from '../symbols.js'
import { preferredErrorFormat } from '../http/negotiate.js'
import { nearMisses, tracedRoutes } from '../routing/trace.js'
import type { RouteTraceLine } from '../routing/trace.js'
import type { RouteDefinition } from '../routing/route-table.js'
import type { ProfilerAdmission } from './admission.js'
import type { LogCapture } from './log-capture.js'
import type { Recorder } from './recorder.js'
import { profileLink, recordingOf } from './recording.js'
import type { Recording } from './recording.js'
import { REDIRECT_COOKIE, clearRedirectCookie, isFollowedRedirect, redirectCookie, redirectOrigin } from './redirect-cookie.js'
import { REQUEST_KIND } from './unit.js'
import type { CapturePolicy } from './capture.js'
import type { CaptureGuards } from './guards/guards.js'

/** The match trace of a miss (the 404 page and the profile share it: see tracedRoutes). */
export function missTrace (routes: readonly RouteDefinition[], method: string, context: KernelContext): readonly RouteTraceLine[] | null {
  if (context.routing === undefined || context.uri === undefined) return null
  return tracedRoutes(routes, method, context.uri.path)
}

export function payloadSize (payload: unknown): number | null {
  if (payload === null || payload === undefined) return 0
  if (typeof payload === 'string') return Buffer.byteLength(payload)
  if (Buffer.isBuffer(payload) || payload instanceof Uint8Array) return payload.byteLength
  return null
}

/**
 * What the profile of a request will need of it, taken as it ends: references to what the
 * request allocated anyway (its headers, query, body, the route's config), never the request or
 * reply themselves. On a client abort the reply has only `raw` (no response was sent).
 */
export function snapshotOf (request: FastifyRequest, reply: FastifyReply, context: KernelContext): RequestSnapshot {
  const raw = request.raw
  return {
    method: request.method,
    url: request.url,
    ip: request.ip ?? '',
    protocol: context.uri?.scheme ?? requestScheme(request.protocol),
    httpVersion: raw.httpVersion,
    headers: request.headers,
    rawHeaders: raw.rawHeaders,
    query: request.query,
    body: request.body,
    routeConfig: request.routeOptions?.config,
    response: typeof reply.getHeaders === 'function' ? { statusCode: reply.statusCode, headers: reply.getHeaders() } : null
  }
}

/** What the profiler's routes carry under `kProfilerRoute` (`RouteMarks`). */
export type ProfilerRouteMark = true | 'profiled' | 'refuses'

/**
 * The recording of HTTP requests, the unit of work the kernel records itself: stage listeners
 * begin it in kernel.request, give the response its token headers in kernel.response and end
 * it in kernel.terminate; the debug error page links the profile.
 */
export class RequestRecording {
  /** the capture mode decides at the response (slow, errors) */
  private readonly decidesAtResponse: boolean

  constructor (
    private readonly recorder: Recorder,
    private readonly admission: ProfilerAdmission,
    private readonly logCapture: LogCapture,
    private readonly kernel: Kernel,
    private readonly capture: CapturePolicy,
    private readonly guards: CaptureGuards
  ) {
    this.decidesAtResponse = capture.mode.mode === 'slow' || capture.mode.mode === 'errors'
  }

  /**
   * First kernel.request listener: begins the recording (its token, so the error page can link
   * it) unless the request is for the profiler itself. A profiler route asked by a client outside
   * the allowed networks, or through a proxy Fastify does not trust, becomes a routing miss: the
   * router answers the ordinary 404, and it is profiled; a route marked `refuses` (the MCP
   * endpoint) refuses such a client itself, unprofiled.
   */
  readonly start = (event: RequestEvent): void => {
    const { request, reply, context } = event
    const mark = routeMarks(request.routeOptions.config)[kProfilerRoute]
    if (mark !== undefined && !request.is404) {
      if (!this.admission.admits(request)) {
        if (mark === 'refuses') return
        context.forcedMiss = true
      } else if (mark !== 'profiled') return
    }
    if (this.guards.skipsAtStart(request)) return
    let asked: boolean | undefined
    const asks = (): boolean => (asked ??= this.capture.asked(request) && this.admission.admits(request))
    if (this.guards.pausedFor(asks)) {
      context.set('profilerLeftOut', 'paused')
      return
    }
    if (!this.capture.records(asks, recordingOf(context.parent) !== undefined)) {
      context.set('profilerLeftOut', true)
      return
    }
    const recording = this.recorder.begin(context, { kind: REQUEST_KIND, request, reply }, this.logCapture.take(request.log))
    if (recording === undefined) context.set('profilerLeftOut', true)
    if (recording !== undefined && this.decidesAtResponse) recording.asked = asks()
  }

  /**
   * A request left out (the capture mode, the save budget, the lag pause) that ends in an
   * exception (`keepExceptions`): its recording begins now, from what the request and its error
   * carry. Neither the profiler's own routes nor an excluded path, route or status.
   */
  private beginAtException (request: FastifyRequest, reply: FastifyReply, context: KernelContext, status: number): void {
    const leftOut = context.get('profilerLeftOut')
    if (leftOut === undefined || recordingOf(context) !== undefined || !this.guards.keepsException(request, status)) return
    const recording = this.recorder.begin(context, { kind: REQUEST_KIND, request, reply, fromException: true }, this.logCapture.take(request.log))
    if (recording === undefined) return
    recording.asked = true
    this.guards.keptException(leftOut === 'paused')
  }

  /** kernel.exception (-64): a request left out that fails gets its profile, linked from the error page. */
  readonly exception = (event: ExceptionEvent): void => {
    this.beginAtException(event.request, event.reply, event.context, event.statusCode)
  }

  /** kernel.response (-100): the token headers, the size and time to first byte. */
  readonly respond = (event: ResponseEvent): void => {
    // a 5xx sent without an exception (`reply.code(503).send()`)
    if (event.reply.statusCode >= 500) this.beginAtException(event.request, event.reply, event.context, event.reply.statusCode)
    const recording = recordingOf(event.context)
    if (recording === undefined) return
    // a status never kept (`excludedHttpCodes`), then the slow and errors modes: kept when the
    // response turns out late or failed; otherwise never linked
    if (this.guards.excludesStatus(event.reply.statusCode) ||
      (this.decidesAtResponse && !this.capture.keeps(event.reply.statusCode >= 400, event.context.elapsed(), recording.asked || (event.reply.statusCode >= 500 && this.guards.options.keepExceptions)))) {
      this.recorder.discard(recording)
      return
    }
    event.reply.header('X-Debug-Token', recording.token)
    event.reply.header('X-Debug-Token-Link', profileLink(event.context, recording.token))
    this.linkRedirect(event, recording)
    recording.size = payloadSize(event.payload)
    recording.timeToFirstByteMs = event.context.elapsed()
  }

  /**
   * Symfony's redirect link: a request the browser was redirected to keeps where from (the
   * cookie the redirect set, then cleared); a redirect sets it, naming its own profile.
   */
  private linkRedirect ({ request, reply, context }: ResponseEvent, recording: Recording): void {
    const secure = context.uri?.scheme === 'https'
    const from = redirectOrigin(request.headers.cookie)
    if (from !== undefined) recording.redirect = from
    if (isFollowedRedirect(reply.statusCode, reply.getHeader('location'))) {
      const route = typeof context.attributes._route === 'string' ? context.attributes._route : null
      reply.header('set-cookie', redirectCookie({ token: recording.token, method: request.method, route, statusCode: reply.statusCode }, secure))
    } else if (request.headers.cookie?.includes(REDIRECT_COOKIE) === true) {
      reply.header('set-cookie', clearRedirectCookie(secure))
    }
  }

  /**
   * kernel.terminate (-1024): the response is on the wire (or the client left). The profile is
   * built and saved on a later tick; a failure is logged, never thrown into the request.
   */
  readonly terminate = (event: TerminateEvent): void => {
    const { context } = event
    const recording = recordingOf(context)
    if (recording === undefined) return
    const { request, reply, aborted } = event
    this.recorder.end(recording, { kind: REQUEST_KIND, name: '', request, reply, context, aborted, snapshot: snapshotOf(request, reply, context) })
  }

  /** The debug error page shows the token, its link, and for a routing miss the closest routes. */
  readonly errorPage = (event: ExceptionEvent): { profile: { token: string, link: string }, hints?: Array<{ title: string, lines: string[] }> } | undefined => {
    const recording = recordingOf(event.context)
    if (recording === undefined) return undefined
    const extension: ReturnType<RequestRecording['errorPage']> = { profile: { token: recording.token, link: profileLink(event.context, recording.token) } }
    if (event.context.routing !== undefined && preferredErrorFormat(event.request.headers.accept) === 'html') {
      const trace = missTrace(this.kernel.routes.routes, event.request.method, event.context)
      const closest = trace === null ? [] : nearMisses(trace)
      if (closest.length > 0) {
        extension.hints = [{
          title: 'Closest routes, and why they did not match',
          lines: closest.map((line) => `${line.methods.join('|')} ${line.path} (${line.name}): ${line.reason}`)
        }]
      }
    }
    return extension
  }

  /** The stage listeners that record each request. */
  get subscriptions (): AnySubscription[] {
    return [
      subscription(Stage.REQUEST, Priority.PROFILER_START, 'profiler token', this.start),
      ...this.guards.options.keepExceptions ? [subscription(Stage.EXCEPTION, Priority.PROFILER_EXCEPTION, 'profiler exception', this.exception)] : [],
      subscription(Stage.RESPONSE, Priority.PROFILER, 'profiler', this.respond),
      subscription(Stage.TERMINATE, Priority.PROFILE_SAVE, 'profile save', this.terminate)
    ]
  }
}
