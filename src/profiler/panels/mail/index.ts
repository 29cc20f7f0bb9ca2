import { setTimeout as delay } from 'node:timers/promises'
import type { RecordingExtension } from '../../recorder.js'
import { ProcessChannels } from '../../instrument/channels.js'
import { instrumentModules } from '../../instrument/modules.js'
import { instrumentEsmCopies } from '../../instrument/esm-copies.js'
import { bullmqInstrumentation } from '../queue/bullmq.js'
import type { JobRecorder } from '../queue/bullmq.js'
import { nodemailerInstrumentation } from './nodemailer.js'
import type { SentMails } from './nodemailer.js'

/** How long a profile waits for a unit's adds and sends still in flight when it ended (then shown as they were). */
export const IN_FLIGHT_WAIT_MS = 5000

let esmReady: Promise<void> = Promise.resolve()

/**
 * The app's own BullMQ and nodemailer, instrumented once per process while a profiler is alive
 * and restored after the last one closes: their CommonJS copies (in require.cache, and as they
 * load) and the ES module copy the app imports of a dual package. Production never touches them.
 */
export const workInstrumentation = new ProcessChannels(() => [
  { instrument: () => instrumentModules([bullmqInstrumentation, nodemailerInstrumentation]) },
  {
    instrument: () => {
      const copies = instrumentEsmCopies([bullmqInstrumentation, nodemailerInstrumentation])
      esmReady = copies.ready
      return copies.undo
    }
  }
])

/** Settles once the ES module copies found at the first profiler's start are instrumented. */
export async function workInstrumented (): Promise<void> {
  await esmReady
}

async function settleWithin (promises: ReadonlyArray<Promise<unknown> | undefined>, ms: number): Promise<void> {
  const waiting = promises.filter((promise): promise is Promise<unknown> => promise !== undefined)
  if (waiting.length === 0) return
  await Promise.race([Promise.allSettled(waiting), delay(ms, undefined, { ref: false })])
}

/**
 * What the json transport never streams (and a transport of the app's own may not) is built
 * again from the compiled message, when that reads nothing twice.
 */
async function buildUnread (mails: SentMails): Promise<void> {
  for (const sent of mails.messages) {
    const message = sent.mail?.message
    if (sent.streamed || !sent.rebuildable || sent.error !== undefined || sent.duration === null || message === null || message === undefined) continue
    await settleWithin([new Promise<void>((resolve) => {
      try {
        message.build(() => { resolve() })
      } catch {
        resolve()
      }
    })], IN_FLIGHT_WAIT_MS)
    await settleWithin([sent.rawRead], IN_FLIGHT_WAIT_MS)
  }
}

/**
 * What lives as long as a recording, for the queue and mail panels: the profiler that records
 * the jobs the unit adds (so that a Worker of this process records each with the same one,
 * linked back), and, at its end, the adds and sends still in flight, waited for (bounded) so
 * that the profile has their ids, answers and raw messages.
 */
export function workExtension (recorder: JobRecorder): RecordingExtension {
  return {
    name: 'queue and mail',
    begin (_recording, context) {
      context.set('jobRecorder', recorder)
    },
    end (_recording, context) {
      const adds = context.get('queuedJobs')
      const mails = context.get('sentMails')
      if (adds === undefined && mails === undefined) return undefined
      return (async () => {
        await settleWithin([...adds?.pending ?? [], ...(mails?.messages ?? []).map((sent) => sent.answered)], IN_FLIGHT_WAIT_MS)
        if (mails === undefined) return
        // a transport has read the message by the time it answers; one that answers first (a stream handed to the app) is given as long
        await settleWithin(mails.messages.map((sent) => sent.rawRead), IN_FLIGHT_WAIT_MS)
        await buildUnread(mails)
      })()
    }
  }
}
