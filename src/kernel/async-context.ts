import { AsyncLocalStorage } from 'node:async_hooks'
import type { Channel } from 'node:diagnostics_channel'
import type { KernelContext } from './context.js'

/**
 * The unit of work each piece of code runs for (an HTTP request, a job, a command…): the kernel
 * runs every request inside its own async context, and the profiler every unit it records (when
 * a feature asks for it: the profiler, to attribute what the unit calls), so that a database
 * driver's diagnostics channel event, a `dump()` or a stopwatch reading made anywhere in the
 * unit's code finds its unit. Off by default: an AsyncLocalStorage in use costs every promise,
 * and production has nothing to attribute.
 */
const units = new AsyncLocalStorage<KernelContext>()

/** The kernel context of the unit the calling code runs for, if any. */
export function currentKernelContext (): KernelContext | undefined {
  return units.getStore()
}

/**
 * Runs `fn` inside the unit's context: for a request, kernel.request and everything Fastify goes
 * on to do for it (its hooks, its body, its handler); for a unit `record()` records, its function.
 */
export function runInUnit<T> (context: KernelContext, fn: () => T): T {
  return units.run(context, fn)
}

/** Runs `fn` outside any unit (a probe the kernel makes, which no profile must show). */
export function outsideUnits<T> (fn: () => T): T {
  return units.exit(fn)
}

/**
 * A call the kernel makes for itself during a request (a session read, a login-throttling count,
 * a profile storage reservation): what it sends to Redis or a database is the kernel's own
 * traffic, which the profiler shows apart from the app's. `secret` is a value its keys may
 * carry that the profile must not (the session id).
 */
export interface KernelTraffic {
  purpose: string
  secret?: string
  /** a library's own traffic, made for itself on the app's behalf (BullMQ's scripts), not the kernel's: shown apart under its name */
  library?: string
}

const kTraffic = Symbol('fastify-kernel.traffic')

type MarkedContext = KernelContext & { [kTraffic]?: KernelTraffic }

/**
 * Runs `fn` as the kernel's own traffic for the current unit: everything it starts (the
 * client's own promises and callbacks) finds a view of the unit's context that says so. A
 * view, not a second AsyncLocalStorage: a second one would cost every promise of the process.
 * Outside a tracked unit (production) it only calls `fn`.
 */
export function asKernelTraffic<T> (traffic: KernelTraffic, fn: () => T): T {
  const context = units.getStore()
  if (context === undefined) return fn()
  const view = Object.create(context) as MarkedContext
  view[kTraffic] = traffic
  return units.run(view, fn)
}

/** The kernel's own call a context stands for, if it is one (see asKernelTraffic). */
export function kernelTrafficOf (context: KernelContext): KernelTraffic | undefined {
  return (context as MarkedContext)[kTraffic]
}

/**
 * Makes the callbacks published through `channel` (a tracing channel's `asyncStart`) run in the
 * unit that started their call, as `contextOf` tells it: a library that queues callbacks (a
 * connection pool handing a freed connection to the next caller in line) otherwise runs them in
 * the unit that freed the resource. Returns what unbinds it.
 */
export function restoreUnitContext (channel: Channel, contextOf: (message: object) => KernelContext | undefined): () => void {
  channel.bindStore(units, contextOf as (message: unknown) => KernelContext)
  return () => { channel.unbindStore(units) }
}
