import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ExceptionEvent, RequestEvent, ResponseEvent, TerminateEvent } from '../kernel/events.js'
import type { KernelContext } from '../kernel/context.js'
import type { Kernel } from '../kernel/kernel.js'
import { Priority, Stage } from '../kernel/stages.js'
import { subscription } from '../kernel/dispatcher.js'
import type { AnySubscription } from '../kernel/dispatcher.js'
import { kProfilerRoute, routeMarks } from '../symbols.js'
import { statusOf } from '../errors/flatten.js'
import { preferredErrorFormat } from '../http/negotiate.js'
import { truncate, Redactor } from '../http/redact.js'
import type { ResolvedProfilerOptions } from './options.js'
import type { ProfileStorage } from './storage/storage.js'
import type { Profile } from './profile.js'
import type { Panels } from './pages/panels.js'
import { ClientAllowList, LocalHosts } from './access.js'
import { proxiedWithoutHeaders, proxyHeaderOf, trustsProxy } from './proxy-headers.js'
import { LogCapture } from './log-capture.js'
import { missTrace } from './collectors/routing.js'
import { payloadSize } from './collectors/request.js'
import { heapUsed } from './collectors/time.js'
import { nearMisses } from '../routing/trace.js'
import { ThrottledWarning } from '../log/throttled-warning.js'
import { Recording, profileLink, recordingOf } from './recording.js'
import { SpanList } from './spans.js'
import { OriginResolver } from './origin.js'
import { errorCodes } from '../errors/codes.js'

/** What the profiler's routes carry under `kProfilerRoute` (`RouteMarks`). */
export type ProfilerRouteMark = true | 'profiled'
/**
 * Saves waiting for the storage beyond this (and beyond the storage's own bound: a storage
 * forgets the oldest profiles past `maxProfiles`, written or not) are dropped: a slow disk never
 * grows the heap.
 */
const MAX_PENDING_SAVES = 256
/**
 * Building and serialising profiles may take at most `saveBudget` of the main thread, measured
 * over windows of this length: a second, so that a burst (a page loading its assets) is not
 * mistaken for a load test. Under a load test the profiler keeps what fits and drops the rest
 * (counted), instead of slowing the app.
 */
const SAVE_WINDOW_MS = 1000
const MAX_URL = 8192

/** A response, as `inject()` (headers as an object) or `fetch` (a Headers) give it. */
export type ProfiledResponse = { headers: { get: (name: string) => string | null } } | { headers: Record<string, unknown> }

function tokenOf (response: ProfiledResponse): string | undefined {
  const headers = response.headers
  const value = typeof headers.get === 'function' ? (headers.get as (name: string) => string | null)('x-debug-token') : (headers as Record<string, unknown>)['x-debug-token']
  const token = Array.isArray(value) ? value[0] : value
  return typeof token === 'string' && token !== '' ? token : undefined
}

export interface ProfilerLogger {
  warn: (fields: object, message: string) => void
}

/**
 * The web profiler without Fastify wiring: the stage listeners that record each request, the
 * error-page extension, and the profile builder, which asks the kernel's collectors for their
 * data (it knows none of their shapes). `plugins/profiler.ts` wires it to the kernel.
 */
export class Profiler {
  readonly allowList: ClientAllowList
  readonly localHosts: LocalHosts
  readonly logCapture = new LogCapture()
  /** requests terminated in this turn of the event loop, saved (or dropped) on the next */
  private terminated: Array<{ request: FastifyRequest, reply: FastifyReply, context: KernelContext, recording: Recording }> = []

  private readonly saveTerminated = (): void => {
    const batch = this.terminated
    this.terminated = []
    // the saves still waiting from earlier turns: a burst that ends in one turn is not a backlog
    const backlog = this.pendingSaves
    for (const { request, reply, context, recording } of batch) this.saveOrDrop(request, reply, context, recording, backlog)
  }

  /** tokens of this process's requests whose profile is not stored (nor dropped) yet */
  private readonly unsaved = new Set<string>()
  /** saves waiting for the storage */
  private pendingSaves = 0
  /** requests terminated whose profile is not built yet */
  private scheduled = 0
  /**
   * profiles not stored: the save budget or the queue was exhausted, the storage failed (a
   * shared store down or slow), or it could not reserve a token (the request then has none)
   */
  dropped = 0
  /** profiles stored: with `dropped`, every request profiled is counted once (the bench checks nothing is lost) */
  saved = 0
  private readonly maxPendingSaves: number
  private readonly saveFailure: ThrottledWarning
  private readonly collectFailure: ThrottledWarning
  private windowStart = 0
  private windowSpent = 0
  private windowSaves = 0
  /** the proxy warnings are logged once per process */
  private proxyWarned = false
  /** what else starts with each profiled request's recording (its stopwatch, the render observer) */
  readonly recordingStarted: Array<(event: RequestEvent, recording: Recording) => void> = []
  /** the panels of the kernel's collectors (each profile's menu, badges and toolbar items) */
  panels: Panels | undefined
  private hostWarned = false
  /** where spans and dumps were started in the app's code, resolved when profiles are built */
  readonly origins: OriginResolver

  constructor (
    readonly options: ResolvedProfilerOptions,
    readonly storage: ProfileStorage,
    private readonly kernel: Kernel,
    private readonly log: ProfilerLogger
  ) {
    this.maxPendingSaves = MAX_PENDING_SAVES + options.maxProfiles
    this.allowList = new ClientAllowList(options.allowedNetworks)
    this.localHosts = new LocalHosts(options.allowedHosts)
    this.saveFailure = new ThrottledWarning(log, 'fastify-kernel: a profile could not be saved (at most one such warning per 10 s; every failure is counted in dropped)')
    this.collectFailure = new ThrottledWarning(log, 'fastify-kernel: a collector failed; its panel is left out of the profile (at most one such warning per 10 s)')
    this.origins = new OriginResolver(kernel.sources)
  }

  /** the one redaction policy, the kernel's (made from these options' `redactNames` and `redactPattern`) */
  get redactor (): Redactor {
    return this.kernel.redactor
  }

  /** Resolves when every save scheduled so far has finished (tests, shutdown). */
  async settled (): Promise<void> {
    while (this.pendingSaves > 0 || this.scheduled > 0) await new Promise((resolve) => setTimeout(resolve, 2))
  }

  /**
   * First kernel.request listener: draws the token (so the error page can link it) unless the
   * request is for the profiler itself. A profiler route asked by a client outside the allowed
   * networks, or through a proxy Fastify does not trust, becomes a routing miss: the router
   * answers the ordinary 404, and it is profiled.
   */
  readonly start = (event: RequestEvent): void => {
    const { request, context } = event
    const mark = routeMarks(request.routeOptions.config)[kProfilerRoute]
    if (mark !== undefined && !request.is404) {
      if (!this.admits(request)) context.forcedMiss = true
      else if (mark !== 'profiled') return
    }
    if (this.saturated) {
      this.dropped++
      return
    }
    const token = this.storage.reserveToken()
    if (token === undefined) {
      // no token can be promised unique now: not profiled, rather than a link to another's profile
      this.dropped++
      return
    }
    // a request that never terminates (a hijacked reply) must not grow this set without bound
    if (this.unsaved.size >= 10_000) this.unsaved.clear()
    this.unsaved.add(token)
    const recording = new Recording(token, this.logCapture.take(request.log), heapUsed(), new SpanList(this.options.maxSpans, context.startedAt, this.options.origins ? this.origins : undefined))
    context.set('profiler', recording)
    for (const started of this.recordingStarted) started(event, recording)
  }

  /**
   * Resolves once the profile of `token` is stored (or dropped), waiting at most `timeoutMs`:
   * the toolbar of a page may be asked for before the page's profile is built, which happens
   * after its response is on the wire.
   */
  async untilStored (token: string, timeoutMs = 2000): Promise<void> {
    const until = performance.now() + timeoutMs
    while (this.unsaved.has(token) && performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 5))
  }

  /**
   * The stored profile of a response of this app, to assert on in tests (Symfony's
   * `$client->getProfile()`): an `inject()` answer, a `fetch` Response, or a token. Waits for
   * the profile to be stored (it is built after the response is sent). Throws KERNEL_NOT_PROFILED
   * for a response without one (production, the profiler's own pages, a request the save budget
   * left out), or a token the storage does not have.
   *
   *     const res = await app.inject('/orders')
   *     const profile = await app.kernelProfiler!.profileOf(res)
   *     t.ok(profile.collected.templates!.renders.length <= 3)
   */
  async profileOf (response: string | ProfiledResponse): Promise<Profile> {
    const token = typeof response === 'string' ? response : tokenOf(response)
    if (token === undefined) throw new errorCodes.KERNEL_NOT_PROFILED('the response has no X-Debug-Token header: it was not profiled (production, a profiler page, or a request the save budget left out)')
    await this.untilStored(token)
    const profile = await this.storage.load(token)
    if (profile === undefined) throw new errorCodes.KERNEL_NOT_PROFILED(`the ${this.storage.kind} storage has no profile "${token}" (dropped, expired, or kept by another process)`)
    return profile
  }

  /**
   * May this client open the profiler? Behind a reverse proxy that Fastify does not trust,
   * `request.ip` is the proxy's address (private, on the same host or network: allowed by
   * default) for every client on the Internet; such requests are refused whatever the address:
   * those with a proxy header, and those naming a host that is not local (docs/profiler.md).
   */
  readonly admits = (request: FastifyRequest): boolean => {
    const trusted = trustsProxy(request)
    const header = trusted ? undefined : proxyHeaderOf(request.headers)
    if (header !== undefined) {
      this.warnAboutProxy(header, request.ip)
      return false
    }
    if (!this.allowList.allows(request.ip)) return false
    // a local peer asking for a public host: a proxy that adds no header (nginx's default)
    const proxied = trusted ? undefined : proxiedWithoutHeaders(request, this.localHosts)
    if (proxied !== undefined) this.warnAboutHost(proxied, request.ip)
    return proxied === undefined
  }

  private warnAboutHost (reason: string, ip: string): void {
    if (this.hostWarned) return
    this.hostWarned = true
    this.log.warn({ ip }, `fastify-kernel: the profiler refused a request from ${ip} because ${reason}: a request from a local address that names a public host, or speaks HTTP/1.0 (nginx's default proxy_pass), came through a reverse proxy that did not say so, and behind it every client seems local. Have the proxy forward the client's address (X-Forwarded-For) and set Fastify's trustProxy to the proxy's address (TRUST_PROXY in the service); or, if this host is your own machine's, list it in profiler.allowedHosts (PROFILER_ALLOWED_HOSTS). Logged once.`)
  }

  private warnAboutProxy (header: string, ip: string): void {
    if (this.proxyWarned) return
    this.proxyWarned = true
    this.log.warn({ header, ip }, `fastify-kernel: the profiler refused a request that came through a proxy (it carries "${header}") while Fastify's trustProxy is off: behind a reverse proxy every client seems to come from the proxy's address. Set Fastify's trustProxy to the proxy's address (TRUST_PROXY in the service) so that request.ip is the real client's, and profiler.allowedNetworks (PROFILER_ALLOWED_NETWORKS) to the clients that may open the profiler. Logged once.`)
  }

  /** kernel.response (-100): the token headers, the size and time to first byte. */
  readonly respond = (event: ResponseEvent): void => {
    const recording = recordingOf(event.context)
    if (recording === undefined) return
    event.reply.header('X-Debug-Token', recording.token)
    event.reply.header('X-Debug-Token-Link', profileLink(event.context, recording.token))
    recording.size = payloadSize(event.payload)
    recording.timeToFirstByteMs = event.context.elapsed()
  }

  /**
   * kernel.terminate (-1024): the response is on the wire (or the client left). The profile is
   * built and saved on a later tick; a failure is logged, never thrown into the request.
   */
  readonly terminate = (event: TerminateEvent): void => {
    const { context } = event
    const recording = recordingOf(context)
    if (recording === undefined) return
    recording.totalMs = context.elapsed()
    recording.aborted = event.aborted
    recording.spans.closed = true
    recording.heapUsedEnd = heapUsed()
    this.scheduled++
    // one immediate for every request terminated in this turn of the event loop, not one each
    if (this.terminated.push({ request: event.request, reply: event.reply, context, recording }) === 1) setImmediate(this.saveTerminated)
  }

  /**
   * Whether the save budget of the current window is spent (or the storage is behind): then a
   * request is not profiled at all. Under a load test most requests then cost the profiler
   * nothing, rather than being recorded for a profile that would be dropped (and carrying a
   * token whose profile never exists).
   */
  get saturated (): boolean {
    return this.saturatedWith(this.pendingSaves)
  }

  private saturatedWith (pendingSaves: number): boolean {
    const now = performance.now()
    if (now - this.windowStart >= SAVE_WINDOW_MS) {
      this.windowStart = now
      this.windowSpent = 0
      this.windowSaves = 0
    }
    return pendingSaves >= this.maxPendingSaves || (this.options.saveBudget < 1 && this.windowSaves >= this.options.keepPerSecond && this.windowSpent >= this.options.saveBudget * SAVE_WINDOW_MS)
  }

  /**
   * Decided on the later tick, not in terminate: a burst of requests is not a backlog unless the
   * storage really is behind (the memory storage never is).
   */
  private saveOrDrop (request: FastifyRequest, reply: FastifyReply, context: KernelContext, recording: Recording, backlog: number): void {
    this.scheduled--
    if (this.saturatedWith(backlog)) {
      this.dropped++
      this.storage.releaseToken(recording.token)
      this.unsaved.delete(recording.token)
      return
    }
    this.pendingSaves++
    this.windowSaves++
    this.save(request, reply, context, recording).catch(() => undefined)
  }

  private async save (request: FastifyRequest, reply: FastifyReply, context: KernelContext, recording: Recording): Promise<void> {
    const started = performance.now()
    try {
      const saved = this.storage.save(this.buildProfile(request, reply, context, recording))
      // the synchronous part (building, serialising) is what the main thread pays
      this.windowSpent += performance.now() - started
      await saved
      this.saved++
    } catch (error) {
      this.dropped++
      this.saveFailure.warn({ err: error, token: recording.token, dropped: this.dropped })
    } finally {
      this.storage.releaseToken(recording.token)
      this.unsaved.delete(recording.token)
      this.pendingSaves--
    }
  }

  /** The debug error page shows the token, its link, and for a routing miss the closest routes. */
  readonly errorPage = (event: ExceptionEvent): { profile: { token: string, link: string }, hints?: Array<{ title: string, lines: string[] }> } | undefined => {
    const recording = recordingOf(event.context)
    if (recording === undefined) return undefined
    const extension: ReturnType<Profiler['errorPage']> = { profile: { token: recording.token, link: profileLink(event.context, recording.token) } }
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
      subscription(Stage.RESPONSE, Priority.PROFILER, 'profiler', this.respond),
      subscription(Stage.TERMINATE, Priority.PROFILE_SAVE, 'profile save', this.terminate)
    ]
  }

  /** The profile of a finished request: its summary, and what each of the kernel's collectors collected. */
  buildProfile (request: FastifyRequest, reply: FastifyReply, context: KernelContext, recording: Recording): Profile {
    // raw span data (what channel handlers kept) becomes masked, cut data before any collector reads it
    recording.spans.format(this.redactor)
    const collected = this.kernel.collect({ request, reply, context, aborted: recording.aborted }, (collector, error) => {
      this.collectFailure.warn({ err: error, collector, token: recording.token })
    })
    const replied = typeof reply.getHeaders === 'function'
    const error = context.exception
    const profile: Profile = {
      version: 2,
      token: recording.token,
      method: request.method,
      url: truncate(this.redactor.url(context.requestUrl(request.url)), MAX_URL),
      statusCode: replied ? reply.statusCode : error !== undefined && error !== null ? statusOf(error) : 0,
      ip: request.ip ?? '',
      time: context.startedAtEpoch,
      duration: Math.round(recording.totalMs * 1000) / 1000,
      aborted: recording.aborted,
      collected
    }
    this.addFigures(profile)
    return profile
  }

  /** The summary's figures the search page filters on (statements, likely N+1), from the collectors that give them. */
  private addFigures (profile: Profile): void {
    let statements: number | undefined
    const nPlusOne: string[] = []
    for (const collector of this.kernel.collectors) {
      const data = profile.collected[collector.name]
      if (collector.figures === undefined || data === undefined) continue
      try {
        const figures = collector.figures(data)
        if (typeof figures.statements === 'number') statements = (statements ?? 0) + figures.statements
        if (figures.nPlusOne === true) nPlusOne.push(collector.name)
      } catch {
        // a collector's figures that fail leave them out, never the profile
      }
    }
    // no statement collected is 0 statements (older profiles, without the figure, match no such filter)
    profile.statements = statements ?? 0
    if (nPlusOne.length > 0) profile.nPlusOne = nPlusOne
  }
}
