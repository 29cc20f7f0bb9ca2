import type { FastifyRequest } from 'fastify'

/**
 * Which units of work the profiler records (the `capture` option, Clockwork's and
 * rack-mini-profiler's modes): every one; a sample; only the slow ones; only those that failed;
 * or only those that ask for it (on demand). A unit that asks is recorded in every mode.
 */
export type CaptureOption = 'all' | 'errors' | 'on-demand' | { sample: number } | { slowerThan: number }

export interface CaptureMode {
  mode: 'all' | 'sample' | 'slow' | 'errors' | 'on-demand'
  /** `sample`: the percentage of units recorded */
  percent?: number
  /** `slow`: kept when its response (another unit: its end) came this late, in milliseconds */
  slowerThanMs?: number
}

/** The header a request asks for its profile by (`X-Kernel-Profile: 1`; `cpu` asks for a CPU profile too). */
export const ASK_HEADER = 'x-kernel-profile'
/** The cookie the profiler's "record this browser's requests" sets. */
export const ASK_COOKIE = 'kernel_profile'
/** How long a browser's on-demand recording lasts once switched on (its cookie's max age). */
export const ASK_COOKIE_SECONDS = 30 * 60

/** The option as its resolved mode, or the problem with it. */
export function captureMode (option: unknown): CaptureMode | string {
  if (option === undefined || option === 'all') return { mode: 'all' }
  if (option === 'errors' || option === 'on-demand') return { mode: option }
  if (typeof option === 'object' && option !== null && !Array.isArray(option)) {
    const keys = Object.keys(option)
    const { sample, slowerThan } = option as { sample?: unknown, slowerThan?: unknown }
    if (keys.length === 1 && typeof sample === 'number' && sample > 0 && sample <= 100) return { mode: 'sample', percent: sample }
    if (keys.length === 1 && typeof slowerThan === 'number' && slowerThan >= 0 && Number.isFinite(slowerThan)) return { mode: 'slow', slowerThanMs: slowerThan }
  }
  return `option "profiler.capture" must be "all", "errors", "on-demand", { sample: <percent, above 0 and up to 100> } or { slowerThan: <milliseconds> }, got ${JSON.stringify(option)}`
}

/** The mode in a few words, as the toolbar and the search page show it. */
export function captureLabel (mode: CaptureMode): string {
  switch (mode.mode) {
    case 'all': return 'every request'
    case 'sample': return `a sample (${String(mode.percent)} %)`
    case 'slow': return `slow requests (${String(mode.slowerThanMs)} ms and over)`
    case 'errors': return 'errors (4xx, 5xx, a unit that threw)'
    case 'on-demand': return 'on demand'
  }
}

/**
 * Whether a request asks to be recorded: the `X-Kernel-Profile` header (any value), or the
 * cookie of "record this browser's requests". Read only in the modes where it decides something;
 * honoured only for clients the profiler admits.
 */
export function asksForProfile (request: FastifyRequest): boolean {
  const header = request.headers[ASK_HEADER]
  if (header !== undefined && header !== '') return true
  const cookie = request.headers.cookie
  return typeof cookie === 'string' && cookie.includes(`${ASK_COOKIE}=on`)
}

/**
 * The capture mode at work: whether a unit beginning now is recorded, and whether a recorded one
 * is kept once its outcome is known (slow and errors modes record every unit and keep those
 * that turn out slow or failed: no one can tell before).
 */
export class CapturePolicy {
  /** units a mode left out (not an overload: the profiler's `dropped` counts those) */
  skipped = 0
  /** what else makes a request ask to be recorded: the integrations' (a browser armed for a CPU profile) */
  readonly asks: Array<(request: FastifyRequest) => boolean> = []

  /** @param random the draw of the sample mode (a test may set its own) */
  constructor (readonly mode: CaptureMode, public random: () => number = Math.random) {}

  /** Whether a request asks to be recorded (see asksForProfile), or asks something of an integration. */
  asked (request: FastifyRequest): boolean {
    return asksForProfile(request) || this.asks.some((asks) => asks(request))
  }

  get label (): string {
    return captureLabel(this.mode)
  }

  /** Whether a unit that begins now is recorded: `asked`, it asked; `nested`, it began inside a recorded one. */
  records (asked: () => boolean, nested: boolean): boolean {
    const { mode } = this.mode
    const recorded = mode === 'all' || mode === 'slow' || mode === 'errors' || nested ||
      (mode === 'sample' && this.random() * 100 < this.mode.percent!) || asked()
    if (!recorded) this.skipped++
    return recorded
  }

  /**
   * Whether a recorded unit is kept: in the slow mode, when it took `elapsedMs` or more; in the
   * errors mode, when it failed (a status of 400 and over, or it threw). Asked and nested units
   * are kept whatever they turned out to be.
   */
  keeps (failed: boolean, elapsedMs: number, asked: boolean): boolean {
    const { mode } = this.mode
    const kept = asked || (mode === 'slow' ? elapsedMs >= this.mode.slowerThanMs! : mode === 'errors' ? failed : true)
    if (!kept) this.skipped++
    return kept
  }
}
