import { tracingChannel } from 'node:diagnostics_channel'
import { CapturedStack, OriginCapture } from '../origin.js'

/** diagnostics_channel's own function a tracing channel's `start` goes through, once found */
let runStores: Function | null | undefined

/**
 * The function of diagnostics_channel that a library's `tracePromise`/`traceCallback`/
 * `traceSync` calls to publish its `start` (`start.runStores`, the same for every channel with
 * subscribers), when this Node's is on the stack as expected: found once, by a probe through a
 * channel of the kernel's. A stack taken below it leaves out diagnostics_channel's frames
 * (publish, its closure, runStores: 3 frames, 1–2 µs a span) as well as the kernel's. Null
 * when the probe does not find it (another Node's diagnostics_channel).
 */
function publisher (): Function | null {
  if (runStores !== undefined) return runStores
  runStores = null
  const probe = tracingChannel<unknown, object>('fastify-kernel:origin-probe')
  let found = false
  const handlers = {
    start () {
      const below = (probe.start as unknown as { runStores?: unknown }).runStores
      found = typeof below === 'function' && new CapturedStack(below, 1).frames().length === 1
    },
    end () {},
    asyncStart () {},
    asyncEnd () {},
    error () {}
  }
  probe.subscribe(handlers)
  const candidate = (probe.start as unknown as { runStores?: unknown }).runStores
  try {
    probe.traceSync(() => undefined, {})
  } catch {
    // no probe, no shortcut
  } finally {
    probe.unsubscribe(handlers)
  }
  if (found && typeof candidate === 'function') runStores = candidate
  return runStores
}

/**
 * Where a tracing channel's handler takes the stack of its call: below diagnostics_channel's
 * `runStores` when this Node has it, else below the handler's guard (`subscriber`); a library
 * that publishes its `start` by hand (no `runStores` on the stack) has its stacks taken below the
 * guard from its first such call on.
 */
export function tracedCallSite (subscriber: Function): OriginCapture {
  const below = publisher()
  return below === null ? new OriginCapture(subscriber) : new OriginCapture(below, undefined, subscriber)
}
