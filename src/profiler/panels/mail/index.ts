import type { FastifyReply, FastifyRequest } from 'fastify'
import type { RecordingExtension } from '../../recorder.js'
import type { ProfilerIntegration } from '../../integration.js'
import { NotFoundHttpException } from '../../../errors/exceptions.js'
import { IN_FLIGHT_WAIT_MS, settleWithin } from '../../instrument/in-flight.js'
import { nodemailerInstrumentation } from './nodemailer.js'
import type { SentMails } from './nodemailer.js'
import { mailCollector } from './collector.js'
import { boundedValue } from '../../bounded-value.js'
import { MAIL_REMOTE_POLICY } from './remote-policy.js'
import { POLICY_HEADERS } from '../../pages/page-policy.js'

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
 * What lives as long as a recording, for the mail panel: at its end, the sends still in flight,
 * waited for (bounded) so that the profile has their answers and raw messages.
 */
export const mailExtension: RecordingExtension = {
  name: 'mail',
  // what a memory storage counts of the unit: what the app gave each message (its bodies and
  // attachments); the raw message is counted as it is read (the recording's retainedBytes)
  held (context, count) {
    for (const sent of context.get('sentMails')?.messages ?? []) count(sent.mail?.data)
  },
  // a unit holding too much: a message given large bodies or attachments keeps them cut, and
  // lets its compiled tree go (it holds the attachments again); the panel shows what the app gave
  shrink (context) {
    for (const sent of context.get('sentMails')?.messages ?? []) {
      const bounded = boundedValue(sent.mail?.data)
      if (sent.mail !== undefined && bounded.cut) sent.mail = { data: bounded.value as Record<string, unknown>, message: null }
    }
  },
  end (_recording, context) {
    const mails = context.get('sentMails')
    if (mails === undefined) return undefined
    return (async () => {
      await settleWithin(mails.messages.map((sent) => sent.answered), IN_FLIGHT_WAIT_MS)
      // a transport has read the message by the time it answers; one that answers first (a stream handed to the app) is given as long
      await settleWithin(mails.messages.map((sent) => sent.rawRead), IN_FLIGHT_WAIT_MS)
      await buildUnread(mails)
    })()
  }
}

/**
 * The mail panel, with no code from the app: while a profiler is alive the app's own nodemailer
 * (its CommonJS copy, and the ES module copy nodemailer 10 ships for `import`) is instrumented
 * (once per process), and the messages a unit sends are recorded with it. Its routes: a
 * message's HTML with its remote content (loaded only when asked, per message), and the
 * download of a message as `.eml`.
 */
export const mail: ProfilerIntegration = {
  name: 'mail',
  modules: [nodemailerInstrumentation],
  setup: () => ({
    extensions: [mailExtension],
    collectors: [mailCollector],
    routes: [{
      // a message's HTML with its remote content, in its frame, when the developer asks (its link):
      // its own policy lets images, stylesheets and fonts load from anywhere, still with no script
      method: 'GET',
      path: '/:token/mail/:n/remote',
      name: '_profiler_mail_remote',
      async handler (request: FastifyRequest, reply: FastifyReply, kit) {
        const { token, n: number } = request.params as { token: string, n: string }
        const profile = /^\d{1,4}$/.test(number) ? await kit.stored(token) : undefined
        const html = profile?.collected.mail?.messages?.[Number(number) - 1]?.html
        if (profile === undefined || typeof html !== 'string') throw new NotFoundHttpException(`Token "${token}" has no HTML message ${number}.`)
        for (const name of POLICY_HEADERS) reply.removeHeader(name)
        return reply
          .header('content-security-policy', MAIL_REMOTE_POLICY)
          .header('cache-control', 'no-store')
          .header('x-content-type-options', 'nosniff')
          .header('referrer-policy', 'no-referrer')
          .type('text/html; charset=utf-8')
          .send(html)
      }
    }, {
      // a message as it was sent, for a mail client: the raw message the transport read
      method: 'GET',
      path: '/:token/mail/:eml',
      name: '_profiler_mail_eml',
      async handler (request: FastifyRequest, reply: FastifyReply, kit) {
        const { token, eml: file } = request.params as { token: string, eml: string }
        const number = /^(\d{1,4})\.eml$/.exec(file)?.[1]
        if (number === undefined) throw new NotFoundHttpException(`No message "${file}": a message is downloaded as <number>.eml.`)
        const profile = await kit.stored(token)
        if (profile === undefined) throw new NotFoundHttpException(`Token "${token}" not found.`)
        const message = profile.collected.mail?.messages?.[Number(number) - 1]
        if (message === undefined) throw new NotFoundHttpException(`The mail panel of token "${profile.token}" has no message ${number}.`)
        if (typeof message.eml !== 'string') throw new NotFoundHttpException(`Message ${number} of token "${profile.token}" has no .eml: ${message.emlNote ?? 'it was not kept'}.`)
        return reply
          .header('cache-control', 'no-store')
          .header('x-content-type-options', 'nosniff')
          .header('content-disposition', `attachment; filename="${profile.token}-mail-${number}.eml"`)
          .type('message/rfc822')
          .send(Buffer.from(message.eml, 'latin1'))
      }
    }]
  })
}
