import { AsyncLocalStorage } from 'node:async_hooks'
import type { KernelContext } from './context.js'

/**
 * The request each piece of code runs for: the kernel runs every request inside its own async
 * context (when a feature asks for it: the profiler, to attribute what the request calls), so
 * that a database driver's diagnostics channel event, a `dump()` or a stopwatch reading made
 * anywhere in the request's code finds its request. Off by default: an AsyncLocalStorage in use
 * costs every promise, and production has nothing to attribute.
 */
const requests = new AsyncLocalStorage<KernelContext>()

/** The kernel context of the request the calling code runs for, if any. */
export function currentKernelContext (): KernelContext | undefined {
  return requests.getStore()
}

/**
 * Runs `fn` (kernel.request, and everything Fastify goes on to do for the request: its hooks,
 * its body, its handler) inside the request's context.
 */
export function runInRequest<T> (context: KernelContext, fn: () => T): T {
  return requests.run(context, fn)
}
