import type { FastifyReply } from 'fastify'
import vary from 'vary'
import type { KernelResponse } from '../src/http/response.js'

/**
 * Sets status and headers of a kernel response on the reply, merged with what other plugins
 * set before (helmet, cors, rate-limit keep their headers; `Vary` is appended to, never
 * replaced), and gives back the body to send: a Buffer when the content type has no charset,
 * since Fastify appends one to string bodies (Symfony sends `application/json` as it is).
 */
export function applyKernelResponse (reply: FastifyReply, response: KernelResponse): string | Buffer {
  reply.removeHeader('content-length')
  reply.code(response.statusCode)
  const headers = response.headers
  for (const name in headers) {
    if (name === 'Vary' || name.toLowerCase() === 'vary') {
      const present = reply.getHeader('vary')
      reply.header('vary', present === undefined ? headers[name] : vary.append(String(present), headers[name]))
    } else reply.header(name, headers[name])
  }
  reply.header('content-type', response.contentType)
  return response.contentType.includes('charset=') ? response.body : Buffer.from(response.body)
}

export function sendKernelResponse (reply: FastifyReply, response: KernelResponse): FastifyReply {
  return reply.send(applyKernelResponse(reply, response))
}
