import type { Badge, Collector } from '../../../kernel/collector.js'
import type { Redactor } from '../../../http/redact.js'
import { REDACTED, truncate } from '../../../http/redact.js'
import { MAX_EML_BYTES } from './nodemailer.js'
import type { MailAddress, MimeNodeLike, SentMail } from './nodemailer.js'
import { PROFILER_PATH } from '../../recording.js'
import { roundMs } from '../../panel-kit/calls.js'
import { countBadge } from '../../panel-kit/calls.js'

/** One attachment of a message (its name, type and size: its content is in the `.eml` only). */
export interface MailAttachment {
  filename: string
  contentType: string
  /** bytes, when the content was given in memory */
  size?: number
  /** an inline part (`cid:` in the HTML) */
  cid?: string
}

/** One message a unit sent, as stored. */
export interface MailRecord {
  /** the transport and where it sends (`SMTP`, host, port; credentials masked) */
  transport: string
  transportOptions: Array<{ name: string, value: string }>
  from: string[]
  to: string[]
  cc: string[]
  bcc: string[]
  replyTo: string[]
  subject: string
  text?: string
  html?: string
  /** why the text or HTML is not shown (read from a file, a URL or a stream: it is in the `.eml`) */
  textNote?: string
  htmlNote?: string
  attachments: MailAttachment[]
  /** the headers the app set itself, secret ones masked */
  headers: Array<[string, string]>
  messageId?: string
  envelope?: { from: string, to: string[] }
  accepted?: string[]
  rejected?: string[]
  /** the server's last answer (SMTP) */
  response?: string
  /** milliseconds from the unit's start */
  at: number
  /** null: still sending when the profile was made */
  duration: number | null
  error?: string
  /** the raw message as the transport read it (latin1, one character a byte; CRLF line ends), secret headers masked; absent when it could not be kept */
  eml?: string
  /** bytes of the raw message (of the `.eml`, when kept) */
  size: number
  /** why there is no `.eml` */
  emlNote?: string
}

export interface MailData {
  messages: MailRecord[]
  /** messages beyond the bound: counted, not kept */
  dropped: number
}

declare module '../../../kernel/collector.js' {
  interface CollectedData {
    mail: MailData
  }
}

/** Characters of a message's text and HTML kept in its profile (the `.eml` has all of it, up to its own bound). */
const MAX_BODY = 256 * 1024

type Address = MailAddress

function addresses (list: Address[] | undefined): string[] {
  const out: string[] = []
  for (const entry of list ?? []) {
    if (Array.isArray(entry.group)) out.push(`${entry.name ?? ''}: ${addresses(entry.group).join(', ')};`)
    else out.push(entry.name !== undefined && entry.name !== '' ? `${entry.name} <${entry.address ?? ''}>` : String(entry.address ?? ''))
  }
  return out.slice(0, 200).map((address) => truncate(address, 500))
}

/** What the app gave as `from`, `to`…, when the compiled message cannot say (its compile failed). */
function givenAddresses (value: unknown): string[] {
  if (value === undefined || value === null || value === '') return []
  const list = Array.isArray(value) ? value : [value]
  return list.slice(0, 200).map((item) => truncate(typeof item === 'object' && item !== null ? addresses([item as Address])[0] ?? '' : String(item), 500))
}

/** A text or HTML body given in memory; else why it is not shown. */
function body (value: unknown): { content?: string, note?: string } {
  if (value === undefined || value === null) return {}
  if (typeof value === 'string') return { content: truncate(value, MAX_BODY) }
  if (Buffer.isBuffer(value)) return { content: truncate(value.toString('utf8'), MAX_BODY) }
  const given = value as { content?: unknown, path?: unknown, href?: unknown, pipe?: unknown }
  if (typeof given.content === 'string' || Buffer.isBuffer(given.content)) return body(given.content)
  if (typeof given.path === 'string') return { note: 'read from a file when sent: see the .eml' }
  if (typeof given.href === 'string') return { note: 'fetched from a URL when sent: see the .eml' }
  return { note: 'read from a stream when sent: see the .eml' }
}

function header (node: MimeNodeLike & { getHeader?: (key: string) => unknown }, key: string): string | undefined {
  const value = node.getHeader?.(key)
  if (typeof value === 'string') return value
  if (typeof value === 'object' && value !== null && typeof (value as { value?: unknown }).value === 'string') return (value as { value: string }).value
  return undefined
}

function contentSize (content: unknown): number | undefined {
  if (typeof content === 'string') return Buffer.byteLength(content)
  if (Buffer.isBuffer(content)) return content.length
  return undefined
}

/** The attachments of the compiled message: each node of its tree that has a file name. */
function attachments (message: MimeNodeLike | null | undefined): MailAttachment[] {
  const out: MailAttachment[] = []
  const walk = (node: unknown, depth: number): void => {
    if (typeof node !== 'object' || node === null || depth > 10 || out.length >= 100) return
    const part = node as MimeNodeLike & { filename?: unknown, content?: unknown, childNodes?: unknown[], getHeader?: (key: string) => unknown }
    if (typeof part.filename === 'string' && part.filename !== '') {
      const attachment: MailAttachment = { filename: truncate(part.filename, 300), contentType: truncate((header(part, 'Content-Type') ?? 'application/octet-stream').split(';')[0]!.trim(), 200) }
      const size = contentSize(part.content)
      if (size !== undefined) attachment.size = size
      const cid = header(part, 'Content-Id')
      if (cid !== undefined) attachment.cid = truncate(cid.replace(/^<|>$/g, ''), 300)
      out.push(attachment)
    }
    for (const child of Array.isArray(part.childNodes) ? part.childNodes : []) walk(child, depth + 1)
  }
  walk(message, 0)
  return out
}

/** The headers the app set (`headers: { … }` or a list), secret ones masked by the redaction policy. */
function appHeaders (value: unknown, redactor: Redactor): Array<[string, string]> {
  const pairs: Array<[string, string]> = []
  const add = (name: unknown, given: unknown): void => {
    const raw = typeof given === 'object' && given !== null && 'value' in given ? (given as { value: unknown }).value : given
    pairs.push([String(name), Array.isArray(raw) ? raw.map(String).join(', ') : String(raw)])
  }
  if (Array.isArray(value)) for (const item of value) add((item as { key?: unknown })?.key, (item as { value?: unknown })?.value)
  else if (typeof value === 'object' && value !== null) for (const [name, given] of Object.entries(value)) add(name, given)
  return redactor.headers(pairs.slice(0, 100))
}

const TRANSPORT_OPTIONS = ['service', 'host', 'port', 'secure', 'pool', 'auth', 'path', 'buffer', 'newline']

function transport (sent: SentMail, redactor: Redactor): { name: string, options: Array<{ name: string, value: string }> } {
  const transporter = sent.mailer.transporter
  const name = typeof transporter?.name === 'string' ? transporter.name : 'transport of the app\'s own'
  const options: Array<{ name: string, value: string }> = []
  const given = transporter?.options ?? {}
  for (const key of TRANSPORT_OPTIONS) {
    if (given[key] === undefined) continue
    // `auth` (user and password, OAuth2 tokens) is masked by the policy, as everywhere
    const value = redactor.isSecret(key) ? REDACTED : redactor.value(given[key])
    options.push({ name: key, value: truncate(typeof value === 'string' ? value : JSON.stringify(value), 300) })
  }
  return { name, options }
}

const HEADER_END = /\r?\n\r?\n/

/**
 * The raw message with the values of its secret top-level headers masked (by name, with the
 * one redaction policy: an `X-Api-Key`, and also a `DKIM-Signature`, whose name says
 * "signature"). The body is the message's content and is kept as sent.
 */
export function maskEml (raw: Buffer, redactor: Redactor): Buffer {
  const text = raw.toString('latin1')
  const end = HEADER_END.exec(text)
  const head = end === null ? text : text.slice(0, end.index)
  const rest = end === null ? '' : text.slice(end.index)
  const lines = head.split(/(?<=\n)/)
  let masking = false
  let changed = false
  const out: string[] = []
  for (const line of lines) {
    if (/^[ \t]/.test(line)) {
      // a folded continuation of the header above
      if (!masking) out.push(line)
      continue
    }
    const colon = line.indexOf(':')
    masking = colon > 0 && redactor.isSecret(line.slice(0, colon).trim())
    if (masking) {
      changed = true
      out.push(`${line.slice(0, colon)}: ${REDACTED}${line.endsWith('\r\n') ? '\r\n' : line.endsWith('\n') ? '\n' : ''}`)
    } else {
      out.push(line)
    }
  }
  return changed ? Buffer.from(out.join('') + rest, 'latin1') : raw
}

function record (sent: SentMail, redactor: Redactor): MailRecord {
  const data = sent.mail?.data ?? {}
  const message = sent.mail?.message
  let parsed: Record<string, Address[]> | undefined
  try { parsed = message?.getAddresses?.() } catch { parsed = undefined }
  const pick = (key: string, given: unknown): string[] => parsed === undefined ? givenAddresses(given) : addresses(parsed[key])
  const { name, options } = transport(sent, redactor)
  const text = body(data.text)
  const html = body(data.html)
  const mail: MailRecord = {
    transport: name,
    transportOptions: options,
    from: pick('from', data.from),
    to: pick('to', data.to),
    cc: pick('cc', data.cc),
    bcc: pick('bcc', data.bcc),
    replyTo: pick('reply-to', data.replyTo),
    subject: typeof data.subject === 'string' ? truncate(data.subject, 2000) : '',
    attachments: attachments(message),
    headers: appHeaders(data.headers, redactor),
    at: roundMs(sent.at),
    duration: sent.duration === null ? null : roundMs(sent.duration),
    size: sent.rawBytes
  }
  if (text.content !== undefined) mail.text = text.content
  if (text.note !== undefined) mail.textNote = text.note
  if (html.content !== undefined) mail.html = html.content
  if (html.note !== undefined) mail.htmlNote = html.note
  const info = (typeof sent.info === 'object' && sent.info !== null ? sent.info : {}) as { messageId?: unknown, envelope?: { from?: unknown, to?: unknown }, accepted?: unknown, rejected?: unknown, response?: unknown }
  let messageId = info.messageId
  if (typeof messageId !== 'string') {
    try { messageId = message?.messageId?.() } catch { messageId = undefined }
  }
  if (typeof messageId === 'string') mail.messageId = truncate(messageId, 500)
  let envelope = info.envelope
  if (envelope === undefined) {
    try { envelope = message?.getEnvelope?.() } catch { envelope = undefined }
  }
  if (typeof envelope === 'object' && envelope !== null) {
    mail.envelope = { from: truncate(String(envelope.from || ''), 500), to: Array.isArray(envelope.to) ? envelope.to.slice(0, 200).map((to) => truncate(String(to), 500)) : [] }
  }
  const list = (value: unknown): string[] | undefined => Array.isArray(value) ? value.slice(0, 200).map((item) => truncate(typeof item === 'object' && item !== null ? String((item as Address).address ?? '') : String(item), 500)) : undefined
  const accepted = list(info.accepted)
  if (accepted !== undefined) mail.accepted = accepted
  const rejected = list(info.rejected)
  if (rejected !== undefined) mail.rejected = rejected
  if (typeof info.response === 'string') mail.response = truncate(info.response, 1000)
  if (sent.error !== undefined) mail.error = truncate(redactor.message(sent.error instanceof Error ? sent.error.message : String(sent.error)), 2000)

  if (sent.rawBytes > MAX_EML_BYTES) mail.emlNote = `the message is ${sent.rawBytes} bytes, over the ${MAX_EML_BYTES} bytes kept of one message`
  else if (!sent.streamed) mail.emlNote = sent.error !== undefined ? 'the message was not sent' : 'the transport did not read the message, and it could not be built again (it reads streams or URLs)'
  else if (!sent.rawComplete) mail.emlNote = 'the transport did not read the message whole (the send failed or was still going on)'
  else {
    // line ends as SMTP sends them and .eml files hold them (the stream transport hands out LF)
    mail.eml = maskEml(Buffer.concat(sent.raw), redactor).toString('latin1').replace(/\r?\n/g, '\r\n')
    mail.size = mail.eml.length
  }
  return mail
}

/** The `index`-th message's HTML with its remote content (1 for the first), loaded in its frame when the developer asks. */
export function mailRemotePath (token: string, index: number): string {
  return `${PROFILER_PATH}/${token}/mail/${index}/remote`
}

/** The `.eml` download of the `index`-th message (1 for the first) of a profile. */
export function emlPath (token: string, index: number): string {
  return `${PROFILER_PATH}/${token}/mail/${index}.eml`
}

function joined (list: readonly string[]): string {
  return list.join(', ')
}

/**
 * The mail panel (Symfony's Mailer panel, for nodemailer): each message the unit sent — from,
 * to, cc, bcc, subject, its text, its HTML shown in a sandboxed frame, its attachments, and a
 * download of the message as sent (`.eml`); the transport, its answer or its failure. The
 * toolbar item counts the messages.
 */
export const mailCollector: Collector<MailData> = {
  name: 'mail',
  kinds: 'all',
  label: 'Mail',
  order: 49,
  deferred: true,
  template: 'profiler/collectors/mail.hbs',
  masked: true,
  schema: {
    type: 'object',
    required: ['messages', 'dropped'],
    properties: {
      dropped: { type: 'number' },
      messages: {
        type: 'array',
        items: {
          type: 'object',
          required: ['transport', 'from', 'to', 'cc', 'bcc', 'subject', 'attachments', 'at', 'size'],
          properties: { transport: { type: 'string' }, from: { type: 'array' }, to: { type: 'array' }, cc: { type: 'array' }, bcc: { type: 'array' }, subject: { type: 'string' }, attachments: { type: 'array' }, at: { type: 'number' }, size: { type: 'number' }, eml: { type: 'string' } }
        }
      }
    }
  },
  collect ({ context, redactor }) {
    const mails = context.get('sentMails')
    if (mails === undefined) return undefined
    return { messages: mails.messages.map((sent) => record(sent, redactor)), dropped: mails.dropped }
  },
  panel (data, profile) {
    return {
      count: data.messages.length + data.dropped,
      dropped: data.dropped,
      failed: data.messages.filter((mail) => mail.error !== undefined).length,
      messages: data.messages.map((mail, index) => ({
        number: index + 1,
        transport: mail.transport,
        transportOptions: mail.transportOptions,
        from: joined(mail.from),
        to: joined(mail.to),
        cc: joined(mail.cc),
        bcc: joined(mail.bcc),
        replyTo: joined(mail.replyTo),
        subject: mail.subject,
        text: mail.text,
        textNote: mail.textNote,
        html: mail.html,
        htmlNote: mail.htmlNote,
        remote: mail.html === undefined ? undefined : mailRemotePath(profile.token, index + 1),
        attachments: mail.attachments,
        headers: mail.headers.map(([name, value]) => ({ name, value })),
        messageId: mail.messageId,
        envelope: mail.envelope === undefined ? undefined : { from: mail.envelope.from, to: joined(mail.envelope.to) },
        accepted: mail.accepted === undefined ? undefined : joined(mail.accepted),
        rejected: mail.rejected === undefined || mail.rejected.length === 0 ? undefined : joined(mail.rejected),
        response: mail.response,
        at: mail.at,
        duration: mail.duration,
        sending: mail.duration === null,
        error: mail.error,
        size: mail.size,
        eml: mail.eml === undefined ? undefined : emlPath(profile.token, index + 1),
        emlNote: mail.emlNote
      }))
    }
  },
  badge (data): Badge | undefined {
    return countBadge(data.messages, data.dropped)
  },
  toolbar (data) {
    if (data === undefined || data.messages.length + data.dropped === 0) return undefined
    return {
      count: data.messages.length + data.dropped,
      failed: data.messages.filter((mail) => mail.error !== undefined).length,
      messages: data.messages.slice(0, 10).map((mail) => ({ subject: truncate(mail.subject, 80), to: truncate(joined(mail.to), 80), error: mail.error !== undefined }))
    }
  }
}
