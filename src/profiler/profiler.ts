import type { Kernel } from '../kernel/kernel.js'
import { KernelContext } from '../kernel/context.js'
import { currentKernelContext, runInUnit } from '../kernel/async-context.js'
import type { Redactor } from '../http/redact.js'
import { ThrottledWarning } from '../log/throttled-warning.js'
import { errorCodes } from '../errors/codes.js'
import type { ResolvedProfilerOptions } from './options.js'
import type { ProfileStorage } from './storage/storage.js'
import type { Profile } from './profile.js'
import type { Panels } from './pages/panels.js'
import type { PanelReader } from './findings.js'
import { ProfilerAdmission } from './admission.js'
import { LogCapture, newCapture } from './log-capture.js'
import { ProfileSaves } from './saves.js'
import type { Drops, ProfilerLogger } from './saves.js'
import { Recorder } from './recorder.js'
import type { RecordingExtension } from './recorder.js'
import { RequestRecording } from './request-recording.js'
import { buildProfile, summaryOf } from './build.js'
import { OriginResolver } from './origin.js'
import { recordingOf } from './recording.js'
import type { Recording } from './recording.js'
import { keepsRecordings } from './storage/storage.js'
import { checkedUnit } from './unit.js'
import { CapturePolicy } from './capture.js'
import { CaptureGuards } from './guards/guards.js'
import type { UnitOfWork } from './unit.js'
import type { KernelProfiler, ProfiledResponse } from './kernel-profiler.js'

export type { ProfilerLogger }
export type { ProfiledResponse }

function tokenOf (response: ProfiledResponse): string | undefined {
  const headers = response.headers
  const value = typeof headers.get === 'function' ? (headers.get as (name: string) => string | null)('x-debug-token') : (headers as Record<string, unknown>)['x-debug-token']
  const token = Array.isArray(value) ? value[0] : value
  return typeof token === 'string' && token !== '' ? token : undefined
}

/**
 * The web profiler without Fastify wiring. It records units of work — HTTP requests through
 * the stage listeners (`requests`), anything else through `record()` — with the `recorder`,
 * which attaches what lives as long as a recording; the `saves` build and store their
 * profiles; `admission` says who may read them. `plugins/profiler.ts` wires it to the kernel.
 */
export class Profiler implements KernelProfiler {
  readonly enabled = true
  readonly admission: ProfilerAdmission
  readonly logCapture = new LogCapture()
  readonly requests: RequestRecording
  /** which units are recorded (the `capture` option) */
  readonly capture: CapturePolicy
  /** what keeps a profiler left on cheap: exclusions, kept exceptions, the lag pause (closed with the app) */
  readonly guards: CaptureGuards
  /** the panels of the kernel's collectors (each profile's menu, badges and toolbar items) */
  panels: Panels | undefined
  /**
   * what the panels tell agents and scripts: the flags they raise, triage's findings, a
   * comparison's figures (each integration's `readers`, in their order)
   */
  readonly readers: Array<PanelReader<any>> = []
  /** where spans and dumps were started in the app's code, resolved when profiles are built */
  readonly origins: OriginResolver
  private readonly saves: ProfileSaves
  private readonly recorder: Recorder

  constructor (
    readonly options: ResolvedProfilerOptions,
    readonly storage: ProfileStorage,
    private readonly kernel: Kernel,
    log: ProfilerLogger
  ) {
    this.admission = new ProfilerAdmission(options.allowedNetworks, options.allowedHosts, log)
    const collectFailure = new ThrottledWarning(log, 'fastify-kernel: a collector failed; its panel is left out of the profile (at most one such warning per 10 s)')
    const failed = (recording: Recording) => (collector: string, error: unknown): void => {
      collectFailure.warn({ err: error, collector, token: recording.token })
    }
    const build = (recording: Recording): Profile => buildProfile(kernel, recording, failed(recording), this.readers)
    // the memory storage keeps recordings as they are, and builds their profiles when they are read
    if (keepsRecordings(storage)) storage.useBuilder({ profile: build, summary: (recording) => summaryOf(kernel, recording) })
    this.saves = new ProfileSaves(storage, options, build, log)
    this.origins = new OriginResolver(kernel.sources)
    this.recorder = new Recorder(this.saves, options.maxSpans, options.origins ? this.origins : undefined, (ended, recording) => kernel.collectLive(ended, failed(recording)), log)
    this.capture = new CapturePolicy(options.capture)
    this.guards = new CaptureGuards(options.guards)
    this.requests = new RequestRecording(this.recorder, this.admission, this.logCapture, kernel, this.capture, this.guards)
  }

  /** the one redaction policy, the kernel's (made from these options' `redactNames` and `redactPattern`) */
  get redactor (): Redactor {
    return this.kernel.redactor
  }

  /** profiles not stored (the save budget, the storage's backlog, no token, a failure) */
  get dropped (): number {
    return this.saves.dropped
  }

  /** the same, by reason */
  get drops (): Readonly<Drops> {
    return this.saves.drops
  }

  /** profiles stored */
  get saved (): number {
    return this.saves.saved
  }

  /** the save budget of this window is spent: a unit beginning now is not profiled */
  get saturated (): boolean {
    return this.saves.saturated
  }

  /** Adds what begins and ends with every recording (the stopwatch, a CPU profile, a capture of mail…). */
  extend (extension: RecordingExtension): this {
    this.recorder.extend(extension)
    return this
  }

  async record<T> (unit: UnitOfWork, fn: (token: string | undefined) => T | PromiseLike<T>): Promise<T> {
    const { kind, name, parent } = checkedUnit(unit)
    const context = new KernelContext()
    context.parent = currentKernelContext()
    // not recorded (the capture mode, or the save budget is spent): the work is done all the same
    if (!this.capture.records(() => false, parent !== null && recordingOf(context.parent) !== undefined)) return await this.leftOut(context, { kind, name, parent }, fn)
    const recording = this.recorder.begin(context, { kind, name, parent }, newCapture(context.startedAt))
    if (recording === undefined) return await this.leftOut(context, { kind, name, parent }, fn)
    let kept = false
    try {
      return await runInUnit(context, () => fn(recording.token))
    } catch (error) {
      recording.failed = true
      context.exception = error
      throw error
    } finally {
      kept = this.capture.keeps(recording.failed, context.elapsed(), false)
      if (kept) this.recorder.end(recording, { kind, name, context, aborted: false })
      else this.recorder.discard(recording)
      // a unit of its own (a command, a job a worker runs), not part of another recording:
      // settled once its profile is stored, so that a script may exit at once, and the token
      // it prints opens from any process
      if (kept && recordingOf(context.parent) === undefined) await this.saves.untilStored(recording.token)
    }
  }

  /**
   * A unit left out (the capture mode, the save budget) runs as it is; one that throws gets its
   * profile all the same (`keepExceptions`), begun and ended at its exception: what it is, its
   * error, its time.
   */
  private async leftOut<T> (context: KernelContext, unit: { kind: string, name: string, parent: string | null | undefined }, fn: (token: string | undefined) => T | PromiseLike<T>): Promise<T> {
    try {
      return await fn(undefined)
    } catch (error) {
      if (this.guards.options.keepExceptions) {
        context.exception = error
        const recording = this.recorder.begin(context, { ...unit, fromException: true }, undefined)
        if (recording !== undefined) {
          recording.failed = true
          this.guards.keptException(false)
          this.recorder.end(recording, { kind: unit.kind, name: unit.name, context, aborted: false })
        }
      }
      throw error
    }
  }

  async settled (): Promise<void> {
    await this.saves.settled()
  }

  /**
   * Resolves once the profile of `token` is stored (or dropped), waiting at most `timeoutMs`:
   * the toolbar of a page may be asked for before the page's profile is built, which happens
   * after its response is on the wire.
   */
  async untilStored (token: string, timeoutMs = 2000): Promise<void> {
    await this.saves.untilStored(token, timeoutMs)
  }

  async profileOf (response: string | ProfiledResponse): Promise<Profile> {
    const token = typeof response === 'string' ? response : tokenOf(response)
    if (token === undefined) throw new errorCodes.KERNEL_NOT_PROFILED('the response has no X-Debug-Token header: it was not profiled (production, a profiler page, or a request the save budget left out)')
    await this.untilStored(token)
    const profile = await this.storage.load(token)
    if (profile === undefined) throw new errorCodes.KERNEL_NOT_PROFILED(`the ${this.storage.kind} storage has no profile "${token}" (dropped, expired, or kept by another process)`)
    return profile
  }

  /** The token of the recording the calling code runs in, if it is profiled (a job queued now links back to it). */
  currentToken (): string | undefined {
    return recordingOf(currentKernelContext())?.token
  }
}
