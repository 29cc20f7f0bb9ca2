import type { KernelContext } from '../../kernel/context.js'
import { currentKernelContext, kernelTrafficOf } from '../../kernel/async-context.js'
import { spansOf } from '../spans.js'
import { CapturedStack } from '../origin.js'
import type { OriginCapture } from '../origin.js'

const kCaller = Symbol('fastify-kernel.caller')

type WithCaller = KernelContext & { [kCaller]?: CapturedStack }

/**
 * The unit the calling code runs for, remembered for a callback a library runs later (a pool
 * handing a connection to the next caller in line): with, when the unit captures origins,
 * the caller's stack, where its call was made. The call then starts on a later tick, with no
 * frame of the app's on its stack; its span falls back to this one. A view of the unit's
 * context, as the kernel's own traffic is one (`asKernelTraffic`): a second AsyncLocalStorage
 * would cost every promise.
 */
export function rememberCaller (site: OriginCapture): KernelContext | undefined {
  const context = currentKernelContext()
  if (context === undefined || spansOf(context)?.capturesOrigins !== true || kernelTrafficOf(context) !== undefined) return context
  const view = Object.create(context) as WithCaller
  view[kCaller] = CapturedStack.at(site)
  return view
}

/** The stack of the call a library's callback runs for (see rememberCaller), if any. */
export function callerOf (context: KernelContext | undefined): CapturedStack | undefined {
  return (context as WithCaller | undefined)?.[kCaller]
}
