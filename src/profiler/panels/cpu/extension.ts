import type { FastifyReply, FastifyRequest } from 'fastify'
import type { KernelContext } from '../../../kernel/context.js'
import { kProfilerRoute, routeMarks } from '../../../symbols.js'
import type { LiveUnit, RecordingExtension } from '../../recorder.js'
import type { Recording } from '../../recording.js'
import type { CpuArming } from './arming.js'
import { isAskedRequest } from './arming.js'
import type { CpuRefusal, CpuRun, CpuRunResult, CpuSampler } from './sampler.js'
import type { CpuProfileRate } from './rate.js'

/** The request header that asks for a CPU profile of its request: `X-Kernel-Profile: cpu`. */
export const PROFILE_HEADER = 'x-kernel-profile'
/** The response header that says why a request that asked for a CPU profile has none. */
export const PROFILE_REFUSED_HEADER = 'x-kernel-profile-refused'

/** A request's CPU profile while it runs, then what it came to; the panel is made from it on read. */
export interface CpuCapture {
  /** the `X-Kernel-Profile` header, or the toolbar's "profile the next request" */
  asked: 'header' | 'toolbar'
  /** the sampling interval asked of V8, in microseconds */
  intervalUs: number
  run?: CpuRun
  result?: CpuRunResult
  /** it did not start: another request's profile ran, or no inspector */
  refused?: CpuRefusal
}

declare module '../../../kernel/context.js' {
  interface KernelState {
    /** the request asked for a CPU profile */
    cpuProfile: CpuCapture
  }
}

/** Whether a header value asks for a CPU profile (`cpu`, or a list holding it). */
function asksCpu (value: string | string[]): boolean {
  for (const item of Array.isArray(value) ? value : [value]) {
    for (const part of item.split(',')) if (part.trim().toLowerCase() === 'cpu') return true
  }
  return false
}

/**
 * A CPU profile of one chosen request, as a recording extension: begun with the request's
 * recording (kernel.request, first listener) when the request asks for it — `X-Kernel-Profile:
 * cpu`, or the armed cookie of "profile the next request" — and the client is one the profiler
 * admits; stopped when the recording ends (kernel.terminate). Any other request costs one
 * header lookup and a field read.
 */
export class CpuProfileExtension implements RecordingExtension {
  readonly name = 'cpu profile'

  constructor (
    private readonly sampler: CpuSampler,
    private readonly arming: CpuArming,
    private readonly admits: (request: FastifyRequest) => boolean,
    private readonly rate?: CpuProfileRate
  ) {}

  begin (recording: Recording, context: KernelContext, unit: LiveUnit): void {
    const request = unit.request
    if (request === undefined) return
    const header = request.headers[PROFILE_HEADER]
    if (header === undefined && !this.arming.any) return
    this.ask(recording.token, context, request, unit.reply, header)
  }

  end (recording: Recording, context: KernelContext): Promise<void> | undefined {
    const capture = context.get('cpuProfile')
    const run = capture?.run
    if (capture === undefined || run === undefined) return undefined
    capture.run = undefined
    return run.stop().then((result) => {
      capture.result = result
      // what a memory storage counts it for: about the size of its JSON
      const profile = result.profile
      if (profile !== undefined) recording.retainedBytes += profile.nodes.length * 160 + (profile.samples?.length ?? 0) * 16
    })
  }

  private ask (token: string, context: KernelContext, request: FastifyRequest, reply: FastifyReply | undefined, header: string | string[] | undefined): void {
    let armed: string | undefined
    if (header === undefined || !asksCpu(header)) {
      // the toolbar armed this browser: its next request of its own (not the profiler's, not an asset)
      if (!this.arming.any || routeMarks(request.routeOptions.config)[kProfilerRoute] !== undefined) return
      armed = this.arming.presented(request)
      if (armed === undefined || !isAskedRequest(request)) return
    }
    if (!this.admits(request)) return
    const capture: CpuCapture = { asked: armed === undefined ? 'header' : 'toolbar', intervalUs: this.sampler.intervalUs }
    context.set('cpuProfile', capture)
    // past the rate, served unprofiled: the panel and a response header say why, an armed browser stays armed
    const wait = this.rate?.take()
    if (wait !== undefined) {
      capture.refused = { reason: `CPU profiles are limited to ${this.rate!.max} per ${this.rate!.windowMs / 1000} s (each start blocks the server for a moment): this request was not profiled; the next one may be in ${Math.ceil(wait / 1000)} s.` }
      reply?.header(PROFILE_REFUSED_HEADER, capture.refused.reason)
      return
    }
    const started = this.sampler.start(token)
    // another request's profile runs: this one says so, and an armed browser stays armed
    if (!('stop' in started)) {
      this.rate?.giveBack()
      capture.refused = started
      reply?.header(PROFILE_REFUSED_HEADER, started.reason)
      return
    }
    capture.run = started
    if (armed !== undefined) {
      this.arming.consume(armed)
      reply?.header('set-cookie', this.arming.clearCookie(request.protocol === 'https'))
    }
  }
}
