import type { StageEventMap } from './events.js'
import type { StageName } from './stages.js'
import { STAGE_NAMES } from './stages.js'
import { now } from './trace.js'
import type { TraceEntry } from './trace.js'
import { errorCodes } from '../errors/codes.js'
import { observedChannel, traceStage } from './channels.js'

export type StageListener<S extends StageName> = (event: StageEventMap[S]) => void | Promise<void>

export interface ListenerOptions {
  /** higher runs first, as in Symfony; default 0 */
  priority?: number
  /** shown in the profiler's timeline; default the function's name */
  name?: string
  /** who added it, as `app.kernel.listeners()` lists it; default `app` */
  origin?: string
}

/**
 * A listener with its stage, priority and name, as a module declares it (Symfony's
 * `getSubscribedEvents`): every built-in listener module exports its subscriptions.
 */
export interface Subscription<S extends StageName = StageName> {
  stage: S
  priority: number
  name: string
  listener: StageListener<S>
}

/** A subscription to any one stage. */
export type AnySubscription = { [S in StageName]: Subscription<S> }[StageName]

/** Declares a subscription (types the listener by its stage). */
export function subscription<S extends StageName> (stage: S, priority: number, name: string, listener: StageListener<S>): Subscription<S> {
  return { stage, priority, name, listener }
}

/** A registered listener, as `app.kernel.listeners()` describes it. */
export interface ListenerDescription {
  stage: StageName
  name: string
  priority: number
  origin: string
}

interface RegisteredListener {
  fn: (event: any) => void | Promise<void>
  priority: number
  name: string
  origin: string
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
    if (list === undefined) throw new errorCodes.KERNEL_UNKNOWN_STAGE(String(stage), STAGE_NAMES.join(', '))
    if (typeof listener !== 'function') throw new errorCodes.KERNEL_INVALID_LISTENER(`A listener of "${stage}" must be a function.`)
    const priority = options.priority ?? 0
    if (!Number.isFinite(priority)) throw new errorCodes.KERNEL_INVALID_LISTENER(`The priority of a "${stage}" listener must be a finite number.`)
    // insert after every listener of equal or higher priority: stable, like Symfony
    let at = list.length
    while (at > 0 && list[at - 1].priority < priority) at--
    // the stage's hook first: when it cannot be added any more, neither is the listener
    this.firstListener.get(stage)?.()
    list.splice(at, 0, { fn: listener, priority, name: options.name ?? (listener.name || 'anonymous'), origin: options.origin ?? 'app' })
  }

  private readonly firstListener = new Map<StageName, () => void>()

  /**
   * Calls `install` once, when one of `stages` has a listener or is traced (now, if it already
   * is): the lifecycle adds a Fastify hook only for a stage that has something to run.
   */
  whenNeeded (stages: readonly StageName[], install: () => void): void {
    if (stages.some((stage) => !this.isIdle(stage))) {
      install()
      return
    }
    const once = (): void => {
      install()
      for (const stage of stages) this.firstListener.delete(stage)
    }
    for (const stage of stages) this.firstListener.set(stage, once)
  }

  hasListeners (stage: StageName): boolean {
    return (this.listeners.get(stage)?.length ?? 0) > 0
  }

  /** Every listener of every stage (or of one), stages in lifecycle order, listeners in the order they run. */
  describe (only?: StageName): ListenerDescription[] {
    const described: ListenerDescription[] = []
    for (const [stage, list] of this.listeners) {
      if (only !== undefined && stage !== only) continue
      for (const { name, priority, origin } of list) described.push({ stage, name, priority, origin })
    }
    return described
  }

  /** @param tracing record each stage and listener with its timing in the request's trace */
  constructor (readonly tracing = true) {}

  /**
   * True when dispatching this stage would do nothing at all: the hooks skip it outright. A
   * stage whose tracing channel has a subscriber is never idle (`StageChannel`).
   */
  isIdle (stage: StageName): boolean {
    return !this.tracing && (this.listeners.get(stage)?.length ?? 0) === 0 && observedChannel(stage) === undefined
  }

  dispatch<S extends StageName> (event: StageEventMap[S]): void | Promise<void> {
    // published only while something subscribes to the stage's tracing channel
    const channel = observedChannel(event.stage)
    if (channel !== undefined) return traceStage(channel, event, () => this.run(event))
    return this.run(event)
  }

  private run (event: StageEventMap[StageName]): void | Promise<void> {
    const list = this.listeners.get(event.stage) as RegisteredListener[]
    if (!this.tracing) return runPlain(list, 0, event)
    const stageEntry: TraceEntry = { stage: event.stage, start: now() - event.context.startedAt, duration: 0 }
    event.context.trace.push(stageEntry)
    return runTraced(list, 0, event, stageEntry)
  }
}

/** The production path: no clocks, no allocations, no try/catch. */
function runPlain (list: RegisteredListener[], index: number, event: StageEventMap[StageName]): void | Promise<void> {
  for (let i = index; i < list.length; i++) {
    if (event.isPropagationStopped) return
    const result = list[i].fn(event)
    if (isThenable(result)) return Promise.resolve(result).then(() => runPlain(list, i + 1, event))
  }
}

function runTraced (list: RegisteredListener[], index: number, event: StageEventMap[StageName], stageEntry: TraceEntry): void | Promise<void> {
  const trace = event.context.trace
  const origin = event.context.startedAt
  for (let i = index; i < list.length; i++) {
    if (event.isPropagationStopped) break
    const listener = list[i]
    const entry: TraceEntry = { stage: event.stage, listener: listener.name, priority: listener.priority, start: now() - origin, duration: 0 }
    trace.push(entry)
    let result: void | Promise<void>
    let returned = false
    // finally, not catch-and-rethrow: the exception travels on untouched (and cheaper)
    try {
      result = listener.fn(event)
      returned = true
    } finally {
      if (!returned) {
        close(entry, event, 'threw')
        close(stageEntry, event, 'threw')
      }
    }
    if (isThenable(result)) {
      return Promise.resolve(result).then(
        () => {
          close(entry, event)
          return runTraced(list, i + 1, event, stageEntry)
        },
        (error: unknown) => {
          close(entry, event, 'threw')
          close(stageEntry, event, 'threw')
          throw error
        }
      )
    }
    close(entry, event)
  }
  close(stageEntry, event)
}

function close (entry: TraceEntry, event: StageEventMap[StageName], outcome?: 'threw'): void {
  entry.duration = now() - event.context.startedAt - entry.start
  if (outcome !== undefined) entry.outcome = outcome
  else if (event.hasFailed) entry.outcome = 'threw'
  else if ('response' in event && event.response !== undefined) entry.outcome = 'responded'
  else if (event.isPropagationStopped) entry.outcome = 'stopped'
}
