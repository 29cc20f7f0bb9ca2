import type { FastifyReply } from 'fastify'
import { statusText } from '../../errors/flatten.js'
import type { ResponseData } from '../profile.js'
import type { Redactor } from '../../http/redact.js'

/** Bytes of a payload as `kernel.response` saw it; null when it is a stream. */
export function payloadSize (payload: unknown): number | null {
  if (payload === null || payload === undefined) return 0
  if (typeof payload === 'string') return Buffer.byteLength(payload)
  if (Buffer.isBuffer(payload) || payload instanceof Uint8Array) return payload.byteLength
  return null
}

/** The response collector: status, headers (Set-Cookie masked), content type, size. */
export function collectResponse (reply: FastifyReply, size: number | null, redactor: Redactor): ResponseData | null {
  // on a client abort, terminate gets no reply, only the raw request
  if (typeof reply.getHeaders !== 'function') return null
  const headers: Array<[string, string]> = []
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value === undefined) continue
    for (const item of Array.isArray(value) ? value : [value]) headers.push([name, String(item)])
  }
  const contentType = reply.getHeader('content-type')
  const length = Number(reply.getHeader('content-length'))
  return {
    statusCode: reply.statusCode,
    statusText: statusText(reply.statusCode),
    headers: redactor.headers(headers),
    contentType: contentType === undefined ? null : String(contentType),
    size: Number.isFinite(length) && reply.getHeader('content-length') !== undefined ? length : size
  }
}
