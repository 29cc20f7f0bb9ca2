import type { FastifyRequest } from 'fastify'
import type { ResolvedCaptureGuards } from './options.js'
import { LagPause, eventLoopLag } from './lag.js'
import type { LagSource } from './lag.js'

/** What the toolbar and the search page show of the guards (the lag pauses), or nothing when there is nothing to say. */
export interface GuardsView {
  pauses: number
  notProfiled: number
  thresholdMs: number
  /** capture was paused at the last reading */
  pausedNow: boolean
  /** exceptions kept from requests the capture mode or the save budget left out */
  exceptionsKept: number
  /** the pauses in a sentence (`capture paused 2 times, 5 requests not profiled while the event loop lagged > 100 ms`), when there were any */
  lagText: string | undefined
  /** the exceptions kept in a sentence, when there were any */
  exceptionsText: string | undefined
}

function counted (n: number, one: string, many: string): string {
  return `${String(n)} ${n === 1 ? one : many}`
}

/**
 * The capture guards of a profiler left on: requests excluded by path, by route
 * (`config: { profiler: false }`) or by status; capture paused while the event loop lags; the
 * exceptions of requests left out, kept all the same. The request recording asks them at each
 * stage (`request-recording.ts`); they hold only counts, never a request.
 */
export class CaptureGuards {
  /** the lag pause, unless `maxEventLoopDelay: false` */
  readonly lag: LagPause | undefined
  /** exceptions kept from requests the capture mode or the save budget left out */
  exceptionsKept = 0
  /** requests not profiled for their path or their route */
  excluded = 0
  private readonly excludedPath: ((path: string) => boolean) | undefined
  private readonly excludedCodes: ReadonlySet<number>

  /** @param lagSource where the lag is read (made only when capture may pause) */
  constructor (readonly options: ResolvedCaptureGuards, lagSource: () => LagSource = eventLoopLag) {
    this.excludedPath = options.excludedPaths
    this.excludedCodes = options.excludedHttpCodes
    this.lag = options.maxEventLoopDelayMs > 0 ? new LagPause(options.maxEventLoopDelayMs, lagSource()) : undefined
  }

  /**
   * Whether a request arriving (its raw target) may be profiled: not an excluded path, capture
   * not paused. The log capture asks it before Fastify even routes the request.
   */
  readonly admitsTarget = (url: string | undefined): boolean => {
    if (this.excludedPath !== undefined && url !== undefined && this.excludedPath(url)) return false
    return this.lag === undefined || !this.lag.paused
  }

  /** Whether a request is never profiled: its route says `config: { profiler: false }`, or its path is excluded. */
  excludes (request: FastifyRequest): boolean {
    const config = request.routeOptions.config as { profiler?: unknown } | undefined
    return config?.profiler === false || (this.excludedPath !== undefined && this.excludedPath(request.url))
  }

  /** At a request's start: excluded (counted), so not recorded at all. */
  skipsAtStart (request: FastifyRequest): boolean {
    if (!this.excludes(request)) return false
    this.excluded++
    return true
  }

  /** At a request's start: capture is paused (a request that asks is recorded all the same); counted. */
  pausedFor (asked: () => boolean): boolean {
    if (this.lag === undefined || !this.lag.paused || asked()) return false
    this.lag.notProfiled++
    return true
  }

  /** At the response: a status whose profile is not kept (`excludedHttpCodes`). */
  excludesStatus (status: number): boolean {
    return this.excludedCodes.size > 0 && this.excludedCodes.has(status)
  }

  /**
   * A request not recorded that ends in an exception (a status of 500 and over): whether its
   * profile is begun now all the same. Not for an excluded path or route, nor an excluded status.
   */
  keepsException (request: FastifyRequest, status: number): boolean {
    return this.options.keepExceptions && status >= 500 && !this.excludesStatus(status) && !this.excludes(request)
  }

  /** An exception's recording began for a request left out (`paused`: by the lag pause, which no longer counts it as not profiled). */
  keptException (paused: boolean): void {
    this.exceptionsKept++
    if (paused && this.lag !== undefined) this.lag.notProfiled--
  }

  get view (): GuardsView | undefined {
    const { lag, exceptionsKept } = this
    if ((lag === undefined || lag.pauses === 0) && exceptionsKept === 0) return undefined
    const pauses = lag?.pauses ?? 0
    const notProfiled = lag?.notProfiled ?? 0
    const thresholdMs = lag?.thresholdMs ?? 0
    const pausedNow = lag?.pausedAtLastReading ?? false
    return {
      pauses,
      notProfiled,
      thresholdMs,
      pausedNow,
      exceptionsKept,
      lagText: pauses === 0 ? undefined : `capture paused ${counted(pauses, 'time', 'times')}${pausedNow ? ' (paused now)' : ''}, ${counted(notProfiled, 'request', 'requests')} not profiled while the event loop lagged > ${String(thresholdMs)} ms`,
      exceptionsText: exceptionsKept === 0 ? undefined : `${counted(exceptionsKept, 'exception', 'exceptions')} kept from requests the capture mode, the save budget or a pause left out`
    }
  }

  close (): void {
    this.lag?.close()
  }
}

declare module '../../kernel/context.js' {
  interface KernelState {
    /** the profiler left the request out (the capture mode, the save budget; `paused`: the lag pause): its exception may still be kept */
    profilerLeftOut: true | 'paused'
  }
}
