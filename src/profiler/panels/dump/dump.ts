import { inspect } from 'node:util'
import { boundedForDump, DUMP_INSPECT } from './dump-bound.js'
import { currentKernelContext } from '../../../kernel/async-context.js'
import { spansOf } from '../../spans.js'
import { ProcessShare } from '../../instrument/process-share.js'
import { CapturedStack } from '../../origin.js'
import type { OriginResolver, SpanOrigin } from '../../origin.js'
import type { KernelContext } from '../../../kernel/context.js'

/** A `dump()` as recorded: its text made at the call, its caller's stack line mapped later. */
export interface RecordedDump {
  label?: string
  text: string
  /** milliseconds from the start of the unit */
  at: number
  /** the caller's stack (a few frames), resolved to the app's frame as the unit ends (settleDumps) */
  stack?: CapturedStack
  /** the app's frame that called it, once resolved */
  origin?: SpanOrigin
  /** entries of the value dumped (DUMP_LIMITS) */
  items?: number
  /** entries the bounds left out */
  cut?: number
}

export interface RecordedDumps {
  dumps: RecordedDump[]
  /** dumps beyond the bound: counted, not kept */
  dropped: number
}

declare module '../../../kernel/context.js' {
  interface KernelState {
    /** the unit's `dump()` calls, when it is profiled */
    dumps: RecordedDumps
  }
}

/** Dumps kept per unit. */
export const MAX_DUMPS = 100
/** Characters kept of one dump's text. */
export const MAX_DUMP_TEXT = 64 * 1024

/** while no profiler is alive in this process, `dump()` returns at once */
const listening = new ProcessShare()

/** A profiler starts (debug mode): `dump()` records in its profiled units. Returns the stop. */
export function listenToDumps (): () => void {
  return listening.retain()
}

/** Frames kept below dump(): its caller, or a helper of the app's and its caller. */
const DUMP_FRAMES = 8

/**
 * Shows `value` in the profiler's dump panel of the unit the calling code runs for
 * (Symfony's `dump()`): inspected at the call (later changes to it do not show), bounded as
 * Symfony's VarDumper bounds it (DUMP_LIMITS: 2500 items in all, 250 an object, 4 levels,
 * strings of 10 000 characters; what is left out is counted), with the file and line it was
 * called from; counted on the toolbar. Returns `value`,
 * so it can wrap an expression.
 *
 * Outside a profiled unit — production, start-up, a timer of the app's own, a unit the
 * profiler does not record — it does nothing at all: it never writes to a response, a log or
 * the console, and costs a counter read when no profiler runs in the process.
 */
export function dump<T> (value: T, label?: string): T {
  if (!listening.held) return value
  const context = currentKernelContext()
  if (context === undefined || spansOf(context) === undefined) return value
  let dumps = context.get('dumps')
  if (dumps === undefined) context.set('dumps', dumps = { dumps: [], dropped: 0 })
  if (dumps.dumps.length >= MAX_DUMPS) {
    dumps.dropped++
    return value
  }
  let text: string
  let items = 0
  let cut = 0
  try {
    // a bounded copy (DUMP_LIMITS), so that a huge value costs what the bound costs
    const bounded = boundedForDump(value)
    items = bounded.items
    cut = bounded.cut
    text = inspect(bounded.value, DUMP_INSPECT)
  } catch (error) {
    text = `[cannot be inspected: ${(error as Error).message}]`
  }
  const recorded: RecordedDump = { text: text.length > MAX_DUMP_TEXT ? `${text.slice(0, MAX_DUMP_TEXT)}… (${text.length - MAX_DUMP_TEXT} more characters)` : text, at: context.elapsed() }
  if (items > 0) recorded.items = items
  if (cut > 0) recorded.cut = cut
  if (label !== undefined) recorded.label = String(label)
  // from the frame that called dump(), not dump's own
  recorded.stack = new CapturedStack(dump, DUMP_FRAMES)
  dumps.dumps.push(recorded)
  return value
}

/**
 * The unit ended: where each dump was called is resolved now, so that no captured stack (whose
 * frames hold their functions and receivers) is kept until the profile is read.
 */
export function settleDumps (context: KernelContext, origins: OriginResolver): void {
  const recorded = context.get('dumps')
  if (recorded === undefined) return
  for (const dumped of recorded.dumps) {
    if (dumped.stack === undefined) continue
    try {
      const origin = origins.resolve(dumped.stack)
      if (origin !== undefined) dumped.origin = origin
    } catch {
      // a stack that cannot be read: the dump shows no origin
    }
    delete dumped.stack
  }
}
