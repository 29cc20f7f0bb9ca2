import type { StageName } from './stages.js'
import { STAGE_NAMES } from './stages.js'

/** One step of a request's timeline: a whole stage (no listener) or one listener in it. */
export interface TraceEntry {
  stage: StageName
  listener?: string
  priority?: number
  /** milliseconds since the request started */
  start: number
  duration: number
  /** set when this step threw, stopped propagation or answered the request */
  outcome?: 'threw' | 'stopped' | 'responded'
}

export const now: () => number = () => performance.now()

/**
 * A unit's trace as it is recorded: flat numbers, `STEP` a step (its stage's index, its
 * listener's id or -1 for the stage itself, start, duration, outcome), in one array of doubles
 * (V8 keeps them unboxed): a traced request keeps two objects for its whole timeline instead of
 * three per step, which its profile would otherwise hold alive until it is evicted.
 */
export type TraceSteps = number[]
export const STEP = 5
export const OUTCOMES = [undefined, 'threw', 'stopped', 'responded'] as const
export type OutcomeCode = 0 | 1 | 2 | 3

/** Every listener ever registered, by id: what a recorded step names. */
const listeners: Array<{ name: string, priority: number }> = []

/** Gives a registered listener its id in traces. */
export function listenerId (name: string, priority: number): number {
  return listeners.push({ name, priority }) - 1
}

/** The steps as entries (`request.kernel.trace`): made when they are read, never while the request runs. */
export function traceEntries (steps: TraceSteps): TraceEntry[] {
  const entries: TraceEntry[] = []
  for (let i = 0; i + STEP <= steps.length; i += STEP) {
    const stage = STAGE_NAMES[steps[i]!]!
    const start = steps[i + 2]!
    const duration = steps[i + 3]!
    const listener = listeners[steps[i + 1]!]
    const entry: TraceEntry = listener === undefined ? { stage, start, duration } : { stage, listener: listener.name, priority: listener.priority, start, duration }
    const outcome = OUTCOMES[steps[i + 4]!]
    if (outcome !== undefined) entry.outcome = outcome
    entries.push(entry)
  }
  return entries
}
