import type { StageEventMap } from './events.js'
import type { StageName } from './stages.js'
import { STAGE_NAMES } from './stages.js'
import { listenerId, now } from './trace.js'
import type { OutcomeCode } from './trace.js'
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
  /** what a recorded trace step names it by */
  id: number
}

const NONE: ReadonlySet<StageListener<any>> = new Set()

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
    this.firstListener.get(stage)?.(listener)
    const name = options.name ?? (listener.name || 'anonymous')
    list.splice(at, 0, { fn: listener, priority, name, origin: options.origin ?? 'app', id: listenerId(name, priority) })
  }

  /**
   * The stages whose Fastify hook the lifecycle added (`whenNeeded`); the others run where the
   * lifecycle reaches them without one (the routes' own hooks, the error and not-found handlers)
   */
  readonly hooked = new Set<StageName>()

  private readonly firstListener = new Map<StageName, (listener: StageListener<any>) => void>()

  /**
   * Calls `install` once, when one of `stages` has a listener or is traced (now, if it already
   * is): the lifecycle adds a Fastify hook only for a stage that has something to run.
   * `hookless`: listeners whose work the lifecycle does without the stage's hook (the router's,
   * on the routes' own hook and the not-found handler): they alone do not call `install`.
   */
  whenNeeded (stages: readonly StageName[], install: () => void, hookless: ReadonlySet<StageListener<any>> = NONE): void {
    const needed = (stage: StageName): boolean => !this.isIdle(stage) &&
      (this.tracing || observedChannel(stage) !== undefined || this.listeners.get(stage)!.some(({ fn }) => !hookless.has(fn)))
    if (stages.some(needed)) {
      install()
      return
    }
    const once = (listener: StageListener<any>): void => {
      if (hookless.has(listener)) return
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
    const steps = event.context.steps
    const stageStep = steps.length
    steps.push(STAGE_INDEX.get(event.stage)!, -1, now() - event.context.startedAt, 0, 0)
    return runTraced(list, 0, event, stageStep)
  }
}

const STAGE_INDEX = new Map(STAGE_NAMES.map((stage, index) => [stage, index]))

/** The production path: no clocks, no allocations, no try/catch. */
function runPlain (list: RegisteredListener[], index: number, event: StageEventMap[StageName]): void | Promise<void> {
  for (let i = index; i < list.length; i++) {
    if (event.isPropagationStopped) return
    const result = list[i].fn(event)
    if (isThenable(result)) return Promise.resolve(result).then(() => runPlain(list, i + 1, event))
  }
}

/** Each listener run and recorded as a step of the unit's trace (numbers only: see TraceSteps). */
function runTraced (list: RegisteredListener[], index: number, event: StageEventMap[StageName], stageStep: number): void | Promise<void> {
  const steps = event.context.steps
  const origin = event.context.startedAt
  const stage = steps[stageStep]!
  for (let i = index; i < list.length; i++) {
    if (event.isPropagationStopped) break
    const listener = list[i]
    const step = steps.length
    steps.push(stage, listener.id, now() - origin, 0, 0)
    let result: void | Promise<void>
    let returned = false
    // finally, not catch-and-rethrow: the exception travels on untouched (and cheaper)
    try {
      result = listener.fn(event)
      returned = true
    } finally {
      if (!returned) {
        close(step, event, 1)
        close(stageStep, event, 1)
      }
    }
    if (isThenable(result)) {
      return Promise.resolve(result).then(
        () => {
          close(step, event)
          return runTraced(list, i + 1, event, stageStep)
        },
        (error: unknown) => {
          close(step, event, 1)
          close(stageStep, event, 1)
          throw error
        }
      )
    }
    close(step, event)
  }
  close(stageStep, event)
}

/** Ends the step at `step`: its duration, and how it ended (threw, stopped, answered). */
function close (step: number, event: StageEventMap[StageName], outcome?: OutcomeCode): void {
  const steps = event.context.steps
  steps[step + 3] = now() - event.context.startedAt - steps[step + 2]!
  steps[step + 4] = outcome ?? (event.hasFailed ? 1 : 'response' in event && event.response !== undefined ? 3 : event.isPropagationStopped ? 2 : 0)
}
