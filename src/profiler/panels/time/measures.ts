import type { PerformanceMeasure } from 'node:perf_hooks'
import { currentSpans } from '../../spans.js'
import { ProcessShare } from '../../instrument/process-share.js'
import { OriginCapture } from '../../origin.js'

type Measure = typeof performance.measure

/** our wrapper, while it is in `performance.measure`'s chain (even under another's wrapper) */
let wrapper: { measure: Measure, original: Measure, enabled: boolean, site: OriginCapture } | undefined

/** The first profiler: wrap `performance.measure` (or enable the wrapper still in its chain). */
function wrapMeasure (): void {
  if (wrapper === undefined) {
    const original = performance.measure
    const state = {
      original,
      enabled: true,
      measure: function measureInUnit (this: typeof performance, ...args: unknown[]): PerformanceMeasure {
        const entry = Reflect.apply(original, this, args) as PerformanceMeasure
        // where the app measured it: the caller of performance.measure()
        if (state.enabled && entry !== undefined) currentSpans()?.add({ kind: 'measure', name: entry.name, start: entry.startTime, duration: entry.duration, data: {} }, state.site)
        return entry
      } as Measure,
      /** the measure's origin: the app's call, just below the wrapper */
      site: undefined as unknown as OriginCapture
    }
    state.site = new OriginCapture(state.measure, 4)
    wrapper = state
    performance.measure = state.measure
  }
  wrapper.enabled = true
}

/**
 * The last profiler is gone: the original goes back, unless something wrapped it since (then
 * ours stays in the chain, passing calls through, and is enabled again later).
 */
function unwrapMeasure (): void {
  if (wrapper === undefined) return
  wrapper.enabled = false
  if (performance.measure === wrapper.measure) {
    performance.measure = wrapper.original
    wrapper = undefined
  }
}

const measures = new ProcessShare(wrapMeasure, unwrapMeasure)

/**
 * `performance.measure()` calls made during a profiled unit become `measure` spans of it.
 *
 * A PerformanceObserver cannot attribute them: its callback runs later, for a batch of entries
 * made by any unit, outside the unit's async context; and two concurrent units'
 * time windows overlap, so a measure's times name no single unit. The measure is therefore
 * attributed where it is made: `performance.measure` is wrapped while at least one profiler
 * is alive (reference-counted, once per process, as the diagnostics channel subscriptions),
 * and the wrapper adds the entry it returns to the span list of the unit it runs for.
 * Production wraps nothing. Limits: a measure made through a reference to the function taken
 * before the profiler started, or in a worker thread, is not seen.
 *
 * Returns the release.
 */
export function observeMeasures (): () => void {
  return measures.retain()
}
