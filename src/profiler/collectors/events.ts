import type { TraceEntry } from '../../kernel/trace.js'

const MAX_ENTRIES = 1000

/** Milliseconds to the microsecond: the clock says more, a profile needs no more (and stays small). */
export function roundMs (ms: number): number {
  return Math.round(ms * 1000) / 1000
}

/** The stages collector: each stage and listener that ran, in order, with start and duration. */
export function collectEvents (trace: readonly TraceEntry[], tracing: boolean): { tracing: boolean, entries: TraceEntry[] } {
  const entries: TraceEntry[] = []
  for (let i = 0; i < trace.length && i < MAX_ENTRIES; i++) {
    const entry = trace[i]
    entries.push({ ...entry, start: roundMs(entry.start), duration: roundMs(entry.duration) })
  }
  return { tracing, entries }
}
