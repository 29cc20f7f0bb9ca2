import { brotliDecompressSync, constants, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib'
import type { Redactor } from '../../../http/redact.js'

/** Bytes kept of one body (request or response); beyond, counted. */
export const MAX_BODY = 64 * 1024
/** Bytes of bodies kept for one unit's calls, all together: a page of 100 calls keeps 1 MiB at most. */
export const MAX_BODIES = 1024 * 1024

/** Text a developer reads: `text/*`, JSON, XML (and their `+json`, `+xml` kinds), forms, scripts. */
const TEXT_TYPE = /^\s*(?:text\/|application\/(?:[\w.-]+\+)?(?:json|xml)\b|application\/x-www-form-urlencoded\b|application\/(?:java|ecma)script\b|application\/x-ndjson\b|application\/graphql\b)/i

export function isTextType (contentType: string | undefined): boolean {
  return contentType !== undefined && TEXT_TYPE.test(contentType)
}

/** What a unit's calls may still keep of their bodies (MAX_BODIES, shared). */
export interface BodyBudget {
  left: number
}

/**
 * A body as it goes by, copied up to its bound (MAX_BODY, and what the unit's budget has
 * left): the bytes sent or received, encoded as they were on the wire (gzip…). Only the first
 * bytes are kept; the size counts all of them.
 */
export class BodyTee {
  readonly chunks: Buffer[] = []
  kept = 0
  size = 0

  constructor (private readonly budget: BodyBudget) {}

  add (chunk: unknown): void {
    if (typeof chunk === 'string') chunk = Buffer.from(chunk)
    if (!(chunk instanceof Uint8Array)) return
    this.size += chunk.byteLength
    const room = Math.min(MAX_BODY - this.kept, this.budget.left)
    if (room <= 0) return
    const part = chunk.byteLength <= room ? chunk : chunk.subarray(0, room)
    // a copy: the library may reuse its buffer
    this.chunks.push(Buffer.from(part))
    this.kept += part.byteLength
    this.budget.left -= part.byteLength
  }
}

/** A body as the HTTP Client panel shows it. */
export interface ShownBody {
  /** the text, masked by the redaction policy; absent when it is not kept (see `note`) */
  text?: string
  /** bytes on the wire */
  size: number
  /** only its first bytes were kept */
  cut?: true
  /** why there is no text: binary, not captured, not decodable */
  note?: string
}

/** The bytes with their content-encoding undone; undefined for an encoding this does not know. */
function decoded (bytes: Buffer, encoding: string | undefined): Buffer | undefined {
  const flush = { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: MAX_BODY * 4 }
  switch ((encoding ?? '').trim().toLowerCase()) {
    case '':
    case 'identity':
      return bytes
    case 'gzip':
    case 'x-gzip':
      return gunzipSync(bytes, flush)
    case 'deflate':
      try {
        return inflateSync(bytes, flush)
      } catch {
        return inflateRawSync(bytes, flush)
      }
    case 'br':
      return brotliDecompressSync(bytes, { finishFlush: constants.BROTLI_OPERATION_FLUSH, maxOutputLength: MAX_BODY * 4 })
    default:
      return undefined
  }
}

/**
 * A captured body, decoded (its `content-encoding` undone, a cut stream as far as it goes),
 * read as UTF-8 (or Latin-1 when its type says so), cut to MAX_BODY characters and masked:
 * JSON by field name, forms by field name, any other text that names a secret masked whole
 * (the one redaction policy's rule for text of unknown structure).
 */
export function shownBody (tee: BodyTee, contentType: string | undefined, encoding: string | undefined, redactor: Redactor): ShownBody {
  const shown: ShownBody = { size: tee.size }
  const cut = tee.kept < tee.size
  if (cut) shown.cut = true
  if (tee.kept === 0) {
    if (tee.size > 0) shown.note = 'not kept: the request\'s calls had kept 1 MiB of bodies already'
    return shown
  }
  let bytes: Buffer | undefined
  try {
    bytes = decoded(Buffer.concat(tee.chunks), encoding)
  } catch {
    // corrupt: as an unknown encoding
    bytes = undefined
  }
  if (bytes === undefined) {
    shown.note = `not shown: its content-encoding (${encoding ?? ''}) could not be decoded`
    return shown
  }
  let text = bytes.toString(/charset\s*=\s*"?(?:iso-8859-1|latin1|us-ascii)/i.test(contentType ?? '') ? 'latin1' : 'utf8')
  if (text.length > MAX_BODY) {
    text = text.slice(0, MAX_BODY)
    shown.cut = true
  }
  shown.text = redactor.text(text, MAX_BODY)
  return shown
}

/** The header's value in a list of pairs (the first one; names compared case-insensitively). */
export function headerOf (headers: ReadonlyArray<[string, string]>, name: string): string | undefined {
  for (const [key, value] of headers) if (key.toLowerCase() === name) return value
  return undefined
}
