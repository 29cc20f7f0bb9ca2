import type { ResolvedCoreOptions } from '../config/options.js'
import type { StageName } from './stages.js'
import type { AnySubscription, ListenerDescription, ListenerOptions, StageListener } from './dispatcher.js'
import { StageDispatcher } from './dispatcher.js'
import type { ExceptionEvent } from './events.js'
import type { CollectedData, Collector, FinishedUnit, RecordedUnit } from './collector.js'
import { isCollectorName, isFinishedRequest } from './collector.js'
import type { RouteTable } from '../routing/route-table.js'
import type { ErrorPageExtension } from './listeners/error-controller.js'
import type { SourceExcerpts } from '../errors/source-excerpt.js'
import { Redactor } from '../http/redact.js'
import { errorCodes } from '../errors/codes.js'

/**
 * The kernel's registry, free of Fastify: its options, the route table, the stage listeners,
 * the data collectors, what debug pages add, the redaction policy. `app.kernel` is this, with
 * the lifecycle's entry points for an app's own handlers (`plugins/fastify-kernel.ts`).
 */
export class Kernel {
  readonly dispatcher: StageDispatcher
  readonly errorPageExtensions: ErrorPageExtension[] = []
  private readonly collectorList: Array<Collector<any>> = []
  /** the collectors that read a unit's live objects, run as it ends (most apps have none) */
  private liveCollectors: Array<Collector<any>> = []
  /** what debug pages and the profiler mask; the profiler's `redact` options replace the default */
  redactor = new Redactor()
  /** the app is ready: Fastify's hooks are fixed */
  ready = false
  /**
   * every request runs inside its own async context (`currentKernelContext()`): a feature that
   * attributes calls to their request turns it on (the profiler); off, no request pays for it
   */
  tracksAsyncContext = false

  /**
   * @param errorController the last kernel.exception listener, also run alone for an exception
   *   thrown while another was handled (Symfony renders that one)
   * @param sources debug: stack frames mapped to their sources, shared by the error page and the profiler
   */
  constructor (
    readonly options: ResolvedCoreOptions,
    readonly routes: RouteTable,
    readonly errorController: (event: ExceptionEvent) => void | Promise<void>,
    readonly sources?: SourceExcerpts
  ) {
    this.dispatcher = new StageDispatcher(options.trace)
  }

  get debug (): boolean {
    return this.options.debug
  }

  /** Adds a listener to a stage; higher priority runs first (Symfony's convention). */
  on<S extends StageName> (stage: S, listener: StageListener<S>, options?: ListenerOptions): this {
    this.dispatcher.on(stage, listener, options)
    return this
  }

  /** Adds a module's subscriptions (each with its stage, priority and name), under `origin`. */
  subscribe (subscriptions: readonly AnySubscription[], origin = 'app'): this {
    for (const { stage, priority, name, listener } of subscriptions) {
      this.dispatcher.on(stage, listener as StageListener<typeof stage>, { priority, name, origin })
    }
    return this
  }

  /**
   * Every listener of every stage (or of one), stages in lifecycle order, listeners in the order
   * they run, with their priority and origin: Symfony's `debug:event-dispatcher`.
   */
  listeners (stage?: StageName): ListenerDescription[] {
    return this.dispatcher.describe(stage)
  }

  /**
   * Adds a data collector: a panel of the profiler and its toolbar item (debug only; without
   * the profiler, collectors are never run).
   */
  addCollector<D> (collector: Collector<D>): this {
    if (!isCollectorName(collector?.name)) {
      throw new errorCodes.KERNEL_INVALID_COLLECTOR(`a collector's name must match [a-z][a-z0-9_-]* (got ${JSON.stringify(collector?.name)}).`)
    }
    if (typeof collector.collect !== 'function') {
      throw new errorCodes.KERNEL_INVALID_COLLECTOR(`collector "${collector.name}" has no collect() function.`)
    }
    if (this.collectorList.some((known) => known.name === collector.name)) {
      throw new errorCodes.KERNEL_INVALID_COLLECTOR(`a collector named "${collector.name}" is already registered.`)
    }
    this.collectorList.push(collector)
    this.collectorList.sort((a, b) => a.order - b.order)
    this.liveCollectors = this.collectorList.filter((known) => known.deferred !== true)
    return this
  }

  /** The collectors, in menu order. */
  get collectors (): ReadonlyArray<Collector<unknown>> {
    return this.collectorList
  }

  /**
   * What the collectors that read a unit's live objects (an app's, the session's) collect of it
   * as it ends, unmasked (masked with the rest when its profile is built), by collector name;
   * undefined when none did. A collector that fails is left out (and reported to `failed`): one
   * broken panel never costs the profile.
   */
  collectLive (finished: Omit<FinishedUnit, 'redactor'>, failed?: (collector: string, error: unknown) => void): Record<string, unknown> | undefined {
    if (this.liveCollectors.length === 0) return undefined
    const input: FinishedUnit = { ...finished, redactor: this.redactor }
    let collected: Record<string, unknown> | undefined
    for (const collector of this.liveCollectors) {
      if (collector.deferred === true) continue
      try {
        // a request collector is only given HTTP requests (their request and reply); a unit collector every unit
        const data = isFinishedRequest(input) ? collector.collect(input) : collector.kinds === 'all' ? collector.collect(input) : undefined
        if (data !== undefined) (collected ??= {})[collector.name] = data
      } catch (error) {
        failed?.(collector.name, error)
      }
    }
    return collected
  }

  /**
   * A profile's collected data, by collector name, masked: the deferred collectors' built now from
   * what the recording kept, the others' as `collectLive()` collected them when the unit ended.
   */
  collectRecorded (recorded: Omit<RecordedUnit, 'redactor'>, live: Record<string, unknown> | undefined, failed?: (collector: string, error: unknown) => void): Partial<CollectedData> & Record<string, unknown> {
    const input: RecordedUnit = { ...recorded, redactor: this.redactor }
    const collected: Record<string, unknown> = {}
    for (const collector of this.collectorList) {
      let data: unknown
      if (collector.deferred === true) {
        if (input.kind !== 'request' && collector.kinds !== 'all') continue
        try {
          data = collector.collect(input)
        } catch (error) {
          failed?.(collector.name, error)
          continue
        }
      } else {
        data = live?.[collector.name]
      }
      if (data !== undefined) collected[collector.name] = collector.masked === true ? data : this.redactor.value(data)
    }
    return collected
  }
}
