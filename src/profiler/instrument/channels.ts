import { channel, tracingChannel } from 'node:diagnostics_channel'
import type { TracingChannelSubscribers } from 'node:diagnostics_channel'
import { currentKernelContext, restoreUnitContext } from '../../kernel/async-context.js'
import type { KernelContext } from '../../kernel/context.js'
import { ProcessShare } from './process-share.js'
import { rememberCaller } from './caller.js'
import type { OriginCapture } from '../origin.js'
import { tracedCallSite } from './publisher.js'
import { recordingOf } from '../recording.js'
import { spansOf } from '../spans.js'

/**
 * A handler of a plain channel (undici's, node:http's), the handlers of a tracing channel
 * (ioredis', mysql2's…), a tracing channel whose callbacks must run in the unit that made
 * the call (`restore`: a pool's queue, see restoreUnitContext), or, for a library that
 * publishes nothing, what instruments it (`instrument`, returning what undoes it, and when it
 * must be awaited, what settles once it is in place). `record`: a plain channel's messages
 * published inside a recorded unit, given with that unit's context (an app's capture: it needs
 * nothing of the profiler's insides).
 */
export type ChannelSubscription =
  | { name: string, handler: ChannelHandler<unknown> }
  | { name: string, record: (message: any, unit: KernelContext) => void }
  | { restore: string }
  | { instrument: () => (() => void) | { undo: () => void, ready: Promise<void> } }
  | { tracing: string, handlers: { [event in keyof TracingChannelSubscribers<object>]?: ChannelHandler<never> } }

/**
 * A handler gets the message and the function diagnostics_channel calls (its guard): a stack
 * captured below that one leaves out the kernel's own frames at no cost (see CapturedStack).
 */
export type ChannelHandler<M> = (message: M, subscriber: Function) => void

const kUnit = Symbol('fastify-kernel.unit')
type Remembered = object & { [kUnit]?: KernelContext }

/**
 * A handler must never throw: diagnostics_channel re-throws a subscriber's error on the next
 * tick, which would crash the app for a fault of the profiler's.
 */
function guarded<A> (fn: ChannelHandler<A>): (arg: A) => void {
  const subscriber = (arg: A): void => {
    try {
      fn(arg, subscriber)
    } catch {
      // the call is simply not recorded
    }
  }
  return subscriber
}

/**
 * Subscriptions to libraries' diagnostics channels, made once per process while at least one
 * profiler is alive (counted), never once per app: two apps in one process would otherwise
 * record every call twice. With no profiler, nothing is subscribed and every channel's
 * `hasSubscribers` stays false, so the libraries skip their tracing altogether.
 */
export class ProcessChannels {
  private readonly share = new ProcessShare(() => { this.subscribe() }, () => { this.unsubscribe() })
  private readonly active: Array<() => void> = []
  private readonly pending: Array<Promise<void>> = []

  constructor (private readonly subscriptions: () => readonly ChannelSubscription[]) {}

  get subscribed (): boolean {
    return this.share.held
  }

  /** Subscribes (on the first holder); the function returned lets go (once), unsubscribing after the last. */
  retain (): () => void {
    return this.share.retain()
  }

  /** Settles once what the subscriptions instrument asynchronously (ES module copies) is in place. */
  async ready (): Promise<void> {
    await Promise.all(this.pending)
  }

  private subscribe (): void {
    this.pending.length = 0
    for (const subscription of this.subscriptions()) {
      if ('instrument' in subscription) {
        const done = subscription.instrument()
        if (typeof done === 'function') {
          this.active.push(done)
        } else {
          this.active.push(done.undo)
          this.pending.push(done.ready)
        }
      } else if ('record' in subscription) {
        const record = subscription.record
        const handler = guarded((message: unknown) => {
          const unit = currentKernelContext()
          if (recordingOf(unit) !== undefined && spansOf(unit) !== undefined) record(message, unit!)
        })
        const plain = channel(subscription.name)
        plain.subscribe(handler)
        this.active.push(() => { plain.unsubscribe(handler) })
      } else if ('restore' in subscription) {
        const traced = tracingChannel(subscription.restore)
        // the unit, and where it made the call: the call itself starts on a later tick
        let site: OriginCapture | undefined
        let siteFor: Function | undefined
        const remember = guarded((message: object, subscriber) => {
          if (siteFor !== subscriber) {
            siteFor = subscriber
            site = tracedCallSite(subscriber)
          }
          ;(message as Remembered)[kUnit] = rememberCaller(site!)
        })
        traced.start.subscribe(remember as (message: unknown) => void)
        const unbind = restoreUnitContext(traced.asyncStart, (message) => (message as Remembered)[kUnit])
        this.active.push(() => { unbind(); traced.start.unsubscribe(remember as (message: unknown) => void) })
      } else if ('tracing' in subscription) {
        const handlers = Object.fromEntries(Object.entries(subscription.handlers).map(([event, fn]) => [event, guarded(fn as ChannelHandler<unknown>)])) as unknown as TracingChannelSubscribers<object>
        const traced = tracingChannel(subscription.tracing)
        traced.subscribe(handlers)
        this.active.push(() => { traced.unsubscribe(handlers) })
      } else {
        const handler = guarded(subscription.handler)
        const plain = channel(subscription.name)
        plain.subscribe(handler)
        this.active.push(() => { plain.unsubscribe(handler) })
      }
    }
  }

  private unsubscribe (): void {
    for (const stop of this.active.splice(0).reverse()) stop()
  }
}
