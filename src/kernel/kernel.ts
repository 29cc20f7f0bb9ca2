import type { ResolvedKernelOptions } from '../config/options.js'
import type { StageName } from './stages.js'
import type { ListenerOptions, StageListener } from './dispatcher.js'
import { StageDispatcher } from './dispatcher.js'
import type { ExceptionEvent } from './events.js'
import type { RouteTable } from '../routing/route-table.js'
import type { ErrorPageExtension } from './listeners/error-controller.js'
import { Redactor } from '../http/redact.js'

/**
 * The kernel's registry, free of Fastify: its options, the route table, the stage listeners,
 * what debug pages add, the redaction policy. `app.kernel` is this, with the lifecycle's entry
 * points for an app's own handlers (`plugins/kernel.ts`).
 */
export class Kernel {
  readonly dispatcher: StageDispatcher
  readonly errorPageExtensions: ErrorPageExtension[] = []
  /** what debug pages and the profiler mask; the profiler's `redact` options replace the default */
  redactor = new Redactor()
  /** the app is ready: Fastify's hooks are fixed */
  ready = false

  /**
   * @param errorController the last kernel.exception listener, also run alone for an exception
   *   thrown while another was handled (Symfony renders that one)
   */
  constructor (readonly options: ResolvedKernelOptions, readonly routes: RouteTable, readonly errorController: (event: ExceptionEvent) => void | Promise<void>) {
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
}
