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

/** Fastify's flag saying the reply's status was set (`reply.code()`), found by its description on the first reply that needs it. */
let statusSetFlag: symbol | undefined

/**
 * The status the app set on the reply before an error (`reply.code(503); throw error`, an
 * onError hook's `reply.code(501)`), which bare Fastify answers an error without a status of
 * its own with: set by `reply.code()` (Fastify 5's `kReplyHasStatusCode`), and 4xx/5xx only
 * (`lib/error-handler.js` setErrorHeaders, `lib/error-status.js`): a 200 or a 302 gives 500.
 */
export function replyStatusOf (reply: FastifyReply): number | undefined {
  const status = reply.statusCode
  if (!(status >= 400 && status <= 599)) return undefined
  statusSetFlag ??= Object.getOwnPropertySymbols(reply).find((symbol) => symbol.description === 'fastify.reply.hasStatusCode')
  return statusSetFlag === undefined || (reply as unknown as Record<symbol, unknown>)[statusSetFlag] === true ? status : undefined
}
