import type { StageEventMap } from './events.js'
import type { StageName } from './stages.js'
import { STAGE_NAMES } from './stages.js'
import { now } from './trace.js'
import { KernelError } from '../errors/kernel-errors.js'

export type StageListener<S extends StageName> = (event: StageEventMap[S]) => void | Promise<void>

export interface ListenerOptions {
  /** higher runs first, as in Symfony; default 0 */
  priority?: number
  /** shown in the profiler's timeline; default the function's name */
  name?: string
}

interface RegisteredListener {
  fn: (event: any) => void | Promise<void>
  priority: number
  name: string
}

function isThenable (value: unknown): value is PromiseLike<unknown> {
  return value !== undefined && value !== null && typeof (value as PromiseLike<unknown>).then === 'function'
}

/**
 * Runs a stage's listeners by priority and records each one in the request's trace.
 * Synchronous listeners stay synchronous: a stage with only sync listeners costs no promise.
 */
export class StageDispatcher {
  private readonly listeners = new Map<StageName, RegisteredListener[]>(
    STAGE_NAMES.map((stage) => [stage, []])
  )

  on<S extends StageName> (stage: S, listener: StageListener<S>, options: ListenerOptions = {}): void {
    const list = this.listeners.get(stage)
    if (list === undefined) throw new KernelError('KERNEL_UNKNOWN_STAGE', `Unknown stage "${String(stage)}"; stages are ${STAGE_NAMES.join(', ')}.`)
    if (typeof listener !== 'function') throw new KernelError('KERNEL_INVALID_LISTENER', `A listener of "${stage}" must be a function.`)
    const priority = options.priority ?? 0
    if (!Number.isFinite(priority)) throw new KernelError('KERNEL_INVALID_LISTENER', `The priority of a "${stage}" listener must be a finite number.`)
    // insert after every listener of equal or higher priority: stable, like Symfony
    let at = list.length
    while (at > 0 && list[at - 1].priority < priority) at--
    list.splice(at, 0, { fn: listener, priority, name: options.name ?? (listener.name || 'anonymous') })
  }

  hasListeners (stage: StageName): boolean {
    return (this.listeners.get(stage)?.length ?? 0) > 0
  }

  /** Name and priority of each listener of a stage, in the order they run. */
  describe (stage: StageName): Array<{ name: string, priority: number }> {
    return (this.listeners.get(stage) ?? []).map(({ name, priority }) => ({ name, priority }))
  }

  dispatch<S extends StageName> (event: StageEventMap[S]): void | Promise<void> {
    const list = this.listeners.get(event.stage) as RegisteredListener[]
    const trace = event.context.trace
    const origin = event.context.startedAt
    const stageEntry = { stage: event.stage, start: now() - origin, duration: 0 } as (typeof trace)[number]
    trace.push(stageEntry)
    return this.runFrom(list, 0, event, stageEntry)
  }

  private runFrom (list: RegisteredListener[], index: number, event: StageEventMap[StageName], stageEntry: { start: number, duration: number, outcome?: string }): void | Promise<void> {
    const trace = event.context.trace
    const origin = event.context.startedAt
    for (let i = index; i < list.length; i++) {
      if (event.isPropagationStopped) break
      const listener = list[i]
      const entry = { stage: event.stage, listener: listener.name, priority: listener.priority, start: now() - origin, duration: 0 } as (typeof trace)[number]
      trace.push(entry)
      let result: void | Promise<void>
      try {
        result = listener.fn(event)
      } catch (error) {
        this.close(entry, event, 'threw')
        this.close(stageEntry, event, 'threw')
        throw error
      }
      if (isThenable(result)) {
        return Promise.resolve(result).then(
          () => {
            this.close(entry, event)
            return this.runFrom(list, i + 1, event, stageEntry)
          },
          (error: unknown) => {
            this.close(entry, event, 'threw')
            this.close(stageEntry, event, 'threw')
            throw error
          }
        )
      }
      this.close(entry, event)
    }
    this.close(stageEntry, event)
  }

  private close (entry: { start: number, duration: number, outcome?: string }, event: StageEventMap[StageName], outcome?: 'threw'): void {
    entry.duration = now() - event.context.startedAt - entry.start
    if (outcome !== undefined) entry.outcome = outcome
    else if ('response' in event && event.response !== undefined) entry.outcome = 'responded'
    else if (event.isPropagationStopped) entry.outcome = 'stopped'
  }
}
