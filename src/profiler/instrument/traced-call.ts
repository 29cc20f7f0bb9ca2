import { currentKernelContext, kernelTrafficOf } from '../../kernel/async-context.js'
import type { KernelTraffic } from '../../kernel/async-context.js'
import { spansOf } from '../spans.js'
import type { OriginCapture } from '../origin.js'
import { tracedCallSite } from './publisher.js'
import type { OpenSpan } from '../spans.js'
import type { ChannelSubscription } from './channels.js'
import { callerOf } from './caller.js'

/** Where a tracing channel's handlers keep the span of a call, on the call's own context object. */
const kSpan = Symbol('fastify-kernel.span')

/** A tracing channel's context object, as Node completes it (`result`, `error`). */
export interface TracedContext {
  result?: unknown
  error?: unknown
  [kSpan]?: OpenSpan
}

/**
 * The handlers of a tracing channel whose calls become spans of `kind`: `start` (published in the
 * caller's async context) opens the span of the unit that made the call, with what `raw`
 * keeps of it (references only: formatting waits for the profile); the call's end or failure
 * closes it, whichever way the library traces it (a promise, a callback, or synchronously).
 */
export function tracedCalls<C extends object> (tracing: string, kind: string, raw: (context: C, traffic: KernelTraffic | undefined) => object | undefined): ChannelSubscription {
  // where the stack is taken (publisher.ts), for the guard diagnostics_channel calls now
  let site: OriginCapture | undefined
  let siteFor: Function | undefined
  const handlers = {
    start (context: C & TracedContext, subscriber: Function) {
      const unit = currentKernelContext()
      const spans = spansOf(unit)
      if (spans === undefined) return
      const traffic = kernelTrafficOf(unit!)
      const data = raw(context, traffic)
      if (data === undefined) return
      // the kernel's own calls come from no line of the app's; a pooled call may have started on a later tick
      const caller = callerOf(unit)
      // subscribed anew when a profiler starts after the last one closed: a new guard
      if (siteFor !== subscriber) {
        siteFor = subscriber
        site = tracedCallSite(subscriber)
      }
      context[kSpan] = spans.start(kind, kind, data as Record<string, unknown>, undefined, traffic !== undefined ? null : site!, caller)
    },
    // traceSync: the call is over when `end` is published (its result set); a promise or a
    // callback is not, then
    end (context: C & TracedContext) {
      if ('result' in context) context[kSpan]?.end()
    },
    asyncStart (context: C & TracedContext) {
      context[kSpan]?.end()
    },
    error (context: C & TracedContext) {
      context[kSpan]?.fail(context.error)
    }
  }
  return { tracing, handlers }
}
