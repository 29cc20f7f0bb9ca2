import { Transform, pipeline } from 'node:stream'
import type { Readable } from 'node:stream'
import { currentKernelContext } from '../../../kernel/async-context.js'
import { recordingOf } from '../../recording.js'
import type { Recording } from '../../recording.js'
import type { OpenSpan } from '../../spans.js'
import type { ModuleInstrumentation } from '../../instrument/modules.js'
import { wrapMethod } from '../../instrument/patch.js'

/** The kind of the timeline's spans of messages sent. */
export const MAIL_SPAN = 'mail'
/** Messages kept per unit. */
export const MAX_MAILS = 50
/** Bytes of one raw message kept for its `.eml` download: a larger one is counted, not kept. */
export const MAX_EML_BYTES = 512 * 1024

/** An address as nodemailer parses it (a group has its members). */
export interface MailAddress { name?: string, address?: string, group?: MailAddress[] }

/** What the profiler reads of nodemailer's compiled message (a MimeNode): references only. */
export interface MimeNodeLike {
  createReadStream (options?: unknown): Readable
  build (callback: (error: unknown, message?: Buffer) => void): unknown
  getAddresses?(): Record<string, MailAddress[]>
  getEnvelope?(): { from?: string | false, to?: string[] }
  messageId?(): string
}

/** nodemailer's MailMessage: the data after the compile plugins (templates), and the compiled message. */
export interface MailMessageLike {
  data: Record<string, unknown>
  message: MimeNodeLike | null
}

/** nodemailer's Mail (`createTransport()`'s transporter). */
export interface MailerLike {
  transporter?: { name?: unknown, options?: Record<string, unknown> }
  options?: Record<string, unknown>
}

/** One `sendMail()` of the unit, as recorded. */
export interface SentMail {
  mailer: MailerLike
  /** milliseconds from the unit's start */
  at: number
  /** milliseconds until nodemailer answered; null while sending */
  duration: number | null
  mail?: MailMessageLike
  /** what the transport answered: messageId, envelope, accepted, rejected, response, or its JSON / stream */
  info?: unknown
  error?: unknown
  /** the message as the transport read it, up to MAX_EML_BYTES */
  raw: Buffer[]
  /** the recording that keeps it: the bytes kept count in a memory storage's bound */
  recording?: Recording
  rawBytes: number
  /** the transport read the message whole */
  rawComplete: boolean
  /** the transport began reading the message (the json transport never does) */
  streamed: boolean
  /** the message can be built again, reading nothing twice (judged before the transport read any of it) */
  rebuildable: boolean
  /** settles when nodemailer answered */
  answered: Promise<void>
  /** settles when the transport has read the message, or failed to */
  rawRead?: Promise<void>
  span?: OpenSpan
}

/** The messages a unit sent (its `sentMails` state). */
export class SentMails {
  readonly messages: SentMail[] = []
  dropped = 0

  constructor (readonly origin: number) {}
}

declare module '../../../kernel/context.js' {
  interface KernelState {
    /** the messages the unit sent through nodemailer */
    sentMails: SentMails
  }
}

function currentMails (): SentMails | undefined {
  const context = currentKernelContext()
  const recording = recordingOf(context)
  if (context === undefined || recording === undefined || recording.spans.closed) return undefined
  let mails = context.get('sentMails')
  if (mails === undefined) {
    mails = new SentMails(context.startedAt)
    context.set('sentMails', mails)
  }
  return mails
}

/** The send `sendMail()` is composing right now (its compile step runs within the call). */
let composing: SentMail | undefined
const sends = new WeakMap<object, SentMail>()

function capture (sent: SentMail, chunk: Buffer): void {
  sent.rawBytes += chunk.length
  if (sent.rawBytes > MAX_EML_BYTES) return
  sent.raw.push(chunk)
  if (sent.recording !== undefined) sent.recording.retainedBytes += chunk.length
}

/**
 * The message's stream, as the transport reads it, also kept (bounded): the `.eml` is exactly
 * what was sent (DKIM-signed when it was). Only the first read is kept: a transport reads once.
 */
function tee (message: MimeNodeLike, sent: SentMail): void {
  const createReadStream = message.createReadStream
  message.createReadStream = function (this: MimeNodeLike, options?: unknown): Readable {
    const stream = createReadStream.call(this, options)
    if (sent.streamed) return stream
    sent.streamed = true
    const tap = new Transform({
      transform (chunk: Buffer | string, _encoding, callback) {
        capture(sent, typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk)
        callback(null, chunk)
      }
    })
    sent.rawRead = new Promise<void>((resolve) => {
      pipeline(stream, tap, (error) => {
        sent.rawComplete = error === undefined || error === null
        resolve()
      })
    })
    return tap
  }
}

type Method = (...args: never[]) => unknown

function wrapSendMail (sendMail: Method): Method {
  return function (this: MailerLike, ...args: unknown[]): unknown {
    const mails = currentMails()
    if (mails === undefined) return sendMail.apply(this, args as never[])
    if (mails.messages.length >= MAX_MAILS) {
      mails.dropped++
      return sendMail.apply(this, args as never[])
    }
    let answered: () => void = () => {}
    const sent: SentMail = { mailer: this, at: performance.now() - mails.origin, duration: null, raw: [], rawBytes: 0, rawComplete: false, streamed: false, rebuildable: false, answered: new Promise<void>((resolve) => { answered = resolve }) }
    mails.messages.push(sent)
    const transport = typeof this.transporter?.name === 'string' ? this.transporter.name : 'transport'
    sent.recording = recordingOf(currentKernelContext())
    sent.span = sent.recording?.spans.start(MAIL_SPAN, `sendMail (${transport})`)
    const settle = (error: unknown, info?: unknown): void => {
      sent.duration = performance.now() - mails.origin - sent.at
      if (error !== undefined && error !== null) {
        sent.error = error
        sent.span?.fail(error)
      } else {
        sent.info = info
        sent.span?.end()
      }
      answered()
    }
    const [data, callback] = args
    composing = sent
    try {
      if (typeof callback === 'function') {
        return sendMail.call(this, data as never, ((error: unknown, info: unknown) => {
          settle(error, info)
          return (callback as (error: unknown, info: unknown) => unknown)(error, info)
        }) as never)
      }
      const result = sendMail.apply(this, args as never[])
      if (typeof (result as Promise<unknown> | undefined)?.then === 'function') {
        (result as Promise<unknown>).then((info) => { settle(null, info) }, (error: unknown) => { settle(error) })
      } else {
        settle(null)
      }
      return result
    } finally {
      composing = undefined
    }
  }
}

function wrapProcessPlugins (processPlugins: Method): Method {
  return function (this: unknown, ...args: unknown[]): unknown {
    const [step, mail] = args as [unknown, MailMessageLike | undefined]
    if (typeof mail === 'object' && mail !== null) {
      if (step === 'compile' && composing !== undefined) {
        composing.mail = mail
        sends.set(mail, composing)
      } else if (step === 'stream') {
        const sent = sends.get(mail)
        if (sent !== undefined && mail.message !== null && typeof mail.message?.createReadStream === 'function') {
          sent.rebuildable = rebuildable(mail.data)
          tee(mail.message, sent)
        }
      }
    }
    return processPlugins.apply(this, args as never[])
  }
}

/** Whether the message can be built again from what it holds (no stream read once, no URL fetched again). */
function rebuildable (data: Record<string, unknown>): boolean {
  const contents: unknown[] = [data.text, data.html, data.watchHtml, data.amp, data.icalEvent]
  for (const list of [data.attachments, data.alternatives]) if (Array.isArray(list)) contents.push(...list)
  return contents.every((content) => {
    if (content === undefined || content === null || typeof content === 'string' || Buffer.isBuffer(content)) return true
    if (typeof content !== 'object') return false
    const { pipe, href, path, content: inner } = content as { pipe?: unknown, href?: unknown, path?: unknown, content?: unknown }
    if (typeof pipe === 'function' || href !== undefined) return false
    if (typeof path === 'string' && /^(https?:|data:)/i.test(path)) return /^data:/i.test(path)
    return inner === undefined || typeof inner === 'string' || Buffer.isBuffer(inner)
  })
}

const instrumented = new WeakSet<object>()

/** The nodemailer versions the instrumentation is written for (its `lib/` layout, and the dual `dist/` of 10; the suite runs 10). */
export const NODEMAILER_VERSIONS = '>=6.0.0 <11'

/**
 * nodemailer publishes nothing a profiler can hear, so the app's own copy is instrumented while
 * a profiler is alive: `sendMail` (the transporter's, whatever its transport) records each
 * message a profiled unit sends, and the step where the message is compiled lets the profiler
 * keep what the transport reads of it (the raw message, for its `.eml`). The Mail prototype is
 * reached through a transporter made for that (`createTransport({ jsonTransport: true })`: no
 * connection), so every transporter the app made, before or after, is seen.
 */
export const nodemailerInstrumentation: ModuleInstrumentation = {
  name: 'nodemailer',
  files: ['/nodemailer/lib/nodemailer.js', '/nodemailer/dist/cjs/nodemailer.js', '/nodemailer/dist/esm/nodemailer.js'],
  versions: NODEMAILER_VERSIONS,
  esm: true,
  instrument (exports, copy) {
    const api = (typeof (exports as { createTransport?: unknown }).createTransport === 'function' ? exports : (exports as { default?: unknown }).default) as { createTransport?: (options: object) => object } | undefined
    if (typeof api?.createTransport !== 'function') {
      copy.lacks(['createTransport'], 'the messages a unit sends')
      return undefined
    }
    const probe = api.createTransport({ jsonTransport: true })
    const prototype = Object.getPrototypeOf(probe) as Record<string, unknown> | null
    if (prototype !== null && instrumented.has(prototype)) return undefined
    const lacking = (['sendMail', '_processPlugins'] as const).filter((name) => typeof prototype?.[name] !== 'function').map((name) => `Mail#${name}`)
    if (prototype === null || lacking.length > 0) {
      copy.lacks(lacking, 'the messages a unit sends')
      return undefined
    }
    instrumented.add(prototype)
    const undo = [wrapMethod(prototype, 'sendMail', wrapSendMail), wrapMethod(prototype, '_processPlugins', wrapProcessPlugins)]
    return () => {
      for (const restore of undo.reverse()) restore()
      instrumented.delete(prototype)
    }
  }
}
