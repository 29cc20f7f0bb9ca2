import { currentKernelContext, kernelTrafficOf } from '../../kernel/async-context.js'
import type { KernelTraffic } from '../../kernel/async-context.js'
import { spansOf } from '../spans.js'
import type { OpenSpan } from '../spans.js'
import type { ChannelSubscription } from './channels.js'

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
 * caller's async context) opens the span of the request that made the call, with what `raw`
 * keeps of it (references only: formatting waits for the profile); the call's end or failure
 * closes it, whichever way the library traces it (a promise, a callback, or synchronously).
 */
export function tracedCalls<C extends object> (tracing: string, kind: string, raw: (context: C, traffic: KernelTraffic | undefined) => object | undefined): ChannelSubscription {
  return {
    tracing,
    handlers: {
      start (context: C & TracedContext) {
        const request = currentKernelContext()
        const spans = spansOf(request)
        if (spans === undefined) return
        const data = raw(context, kernelTrafficOf(request!))
        if (data !== undefined) context[kSpan] = spans.start(kind, kind, data as Record<string, unknown>)
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
  }
}
