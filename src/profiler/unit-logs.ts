import { currentKernelContext } from '../kernel/async-context.js'
import { ProcessChannels } from './instrument/channels.js'
import { recordingOf } from './recording.js'
import { noteLogCall } from './log-capture.js'
import { REQUEST_KIND } from './unit.js'

/** What pino (9.10 and later) publishes on `tracing:pino_asJson:start`: the logger and `asJson(obj, msg, level, time)`'s arguments. */
interface AsJsonMessage {
  arguments: ArrayLike<unknown>
}

/**
 * The log records of units of work other than HTTP requests (jobs, commands…): whatever pino
 * logger writes them, in the unit's async context, read from pino's `pino_asJson` tracing
 * channel. A request's records are captured from `request.log` instead (log-capture.ts), so
 * they are not noted twice. Subscribed once per process while a profiler is alive.
 */
export const unitLogChannels = new ProcessChannels(() => [{
  tracing: 'pino_asJson',
  handlers: {
    start (message: AsJsonMessage) {
      const recording = recordingOf(currentKernelContext())
      if (recording === undefined || recording.kind === REQUEST_KIND || recording.spans.closed || recording.logs === undefined) return
      const [obj, msg, level] = Array.from(message.arguments)
      if (typeof level !== 'number') return
      noteLogCall(recording.logs, level, msg === undefined ? [obj] : [obj, msg])
    }
  }
}])
