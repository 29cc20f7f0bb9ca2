import type { TraceEntry } from '../../kernel/trace.js'

const MAX_ENTRIES = 1000

/** The stages collector: each stage and listener that ran, in order, with start and duration. */
export function collectEvents (trace: readonly TraceEntry[], tracing: boolean): { tracing: boolean, entries: TraceEntry[] } {
  return { tracing, entries: trace.slice(0, MAX_ENTRIES).map((entry) => ({ ...entry })) }
}
