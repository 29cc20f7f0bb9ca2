import { createRequire } from 'node:module'
import type { Session } from 'node:inspector'
import { errorCodes } from '../../../errors/codes.js'
import { ProcessShare } from '../../instrument/process-share.js'
import { MAX_PROFILE_MS, SAMPLING_INTERVAL_US } from './cpu-profile.js'
import { profilerBlocked } from '../../guards/lag.js'
import type { CpuProfile } from './cpu-profile.js'

/** What a CPU profile came to once stopped. */
export interface CpuRunResult {
  profile?: CpuProfile
  /** stopped before its holder ended: it ran `maxMs` (or the profiler closed) */
  cut: boolean
  /** why there is no profile */
  error?: string
  /** what starting V8's profiler took, ms (it lists every function compiled so far) */
  startMs?: number
}

/** One CPU profile being taken, for one holder (a recording's token). */
export interface CpuRun {
  readonly holder: string
  /** Stops it (once: a later call gets the same result); a run already cut resolves to its profile. */
  stop (): Promise<CpuRunResult>
}

/** Why a CPU profile did not start: another one runs (its holder), or the inspector is not there. */
export interface CpuRefusal {
  busyWith?: string
  reason: string
}

/** Calls `fn` after `ms` (a timer that keeps no process alive); returns its cancel. */
export type Schedule = (fn: () => void, ms: number) => () => void

const unrefTimer: Schedule = (fn, ms) => {
  const timer = setTimeout(fn, ms)
  timer.unref()
  return () => { clearTimeout(timer) }
}

class Run implements CpuRun {
  result: Promise<CpuRunResult> | undefined
  cancelTimer: () => void = () => {}
  startMs = 0

  constructor (readonly holder: string, private readonly sampler: CpuSampler) {}

  stop (): Promise<CpuRunResult> {
    return (this.result ??= this.sampler.finish(this, false))
  }
}

const requireBuiltin = createRequire(import.meta.url)

/**
 * V8's CPU profiler through `node:inspector`, one profile at a time for the whole process (V8
 * samples the whole thread: two profiles at once would each hold the other's samples). The
 * inspector session is opened when the first profile is asked (a process that never asks opens
 * none), and closed when the last profiler that used it closes. A profile running `maxMs` is
 * stopped then, its holder gets it when it ends, and the profiler is free for another.
 */
export class CpuSampler {
  /** CPU profiles started in this process (tests: a request that did not ask starts none) */
  started = 0
  private session: Session | undefined
  private current: Run | undefined
  private readonly users = new ProcessShare(undefined, () => { this.close() })

  /**
   * @param intervalUs the sampling interval asked of V8
   * @param maxMs a profile is stopped after this long
   * @param schedule the timer of that stop (a test fires it itself)
   */
  constructor (readonly intervalUs = SAMPLING_INTERVAL_US, readonly maxMs = MAX_PROFILE_MS, private readonly schedule: Schedule = unrefTimer) {}

  /** whether the inspector session is open */
  get connected (): boolean {
    return this.session !== undefined
  }

  /** A profiler uses it from now on; the function returned lets go (the session closes after the last). */
  retain (): () => void {
    return this.users.retain()
  }

  /** Starts a CPU profile for `holder`, unless one runs already (or the inspector is missing). */
  start (holder: string): CpuRun | CpuRefusal {
    if (this.current !== undefined) return { busyWith: this.current.holder, reason: `another request's CPU profile was running (${this.current.holder})` }
    let session: Session
    try {
      session = this.open()
    } catch (error) {
      return { reason: `the inspector is not available: ${(error as Error).message}` }
    }
    const run = new Run(holder, this)
    this.current = run
    this.started++
    // dispatched at once (an in-process session answers synchronously); a failure shows at stop
    const before = performance.now()
    session.post('Profiler.start', () => {})
    run.startMs = performance.now() - before
    profilerBlocked(run.startMs)
    run.cancelTimer = this.schedule(() => { run.result ??= this.finish(run, true) }, this.maxMs)
    return run
  }

  /** @internal Stops `run`'s profile (its timer, or its holder ending). */
  async finish (run: Run, cut: boolean): Promise<CpuRunResult> {
    run.cancelTimer()
    if (this.current !== run) return { cut: true, error: 'the profiler was closed while the profile ran' }
    this.current = undefined
    try {
      // V8 builds the profile while the loop waits (answered at once): the profiler's own block
      const before = performance.now()
      const stopped = this.post('Profiler.stop')
      profilerBlocked(performance.now() - before)
      const { profile } = await stopped as { profile: CpuProfile }
      return { profile, cut, startMs: run.startMs }
    } catch (error) {
      return { cut, error: (error as Error).message }
    }
  }

  private open (): Session {
    if (this.session !== undefined) return this.session
    const { Session } = requireBuiltin('node:inspector') as typeof import('node:inspector')
    const session = new Session()
    session.connect()
    session.post('Profiler.enable', () => {})
    session.post('Profiler.setSamplingInterval', { interval: this.intervalUs }, () => {})
    this.session = session
    return session
  }

  private post (method: string, params?: object): Promise<unknown> {
    const session = this.session
    return new Promise((resolve, reject) => {
      if (session === undefined) throw new errorCodes.KERNEL_CPU_PROFILE('the inspector session is closed')
      session.post(method, params, (error, result) => {
        if (error !== null && error !== undefined) reject(new errorCodes.KERNEL_CPU_PROFILE(error.message, { cause: error }))
        else resolve(result)
      })
    })
  }

  private close (): void {
    const running = this.current
    this.current = undefined
    if (running !== undefined) {
      running.cancelTimer()
      running.result ??= Promise.resolve({ cut: true, error: 'the profiler was closed while the profile ran' })
    }
    this.session?.disconnect()
    this.session = undefined
  }
}

/** The process's one sampler: every profiler of the process shares it. */
export const processSampler = new CpuSampler()
