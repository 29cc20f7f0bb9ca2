import type { StageName } from './stages.js'

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
