import type { FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify'
import { RequestTimeoutHttpException, ServiceUnavailableHttpException } from '../src/errors/exceptions.js'
import { handleException } from './lifecycle.js'

interface PendingBody {
  request: FastifyRequest
  reply: FastifyReply
  stop: () => void
}

function expectsBody (request: FastifyRequest): boolean {
  const length = request.headers['content-length']
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined
}

/**
 * A body must arrive within `timeoutMs`: one trickled a byte at a time, or stalled half way,
 * gets 408 through the kernel's error pages and its connection closed, instead of holding a
 * socket and its buffered bytes for ever. On close, bodies still arriving get 503 at once, so a
 * stuck client never holds up a graceful shutdown. Only requests with a body pay for a timer.
 */
export function createBodyTimeout (app: FastifyInstance, timeoutMs: number): BodyTimeoutHook | undefined {
  if (timeoutMs <= 0) return undefined
  const pending = new Set<PendingBody>()

  function answer (entry: PendingBody, error: Error): void {
    entry.stop()
    if (entry.reply.sent) return
    // the rest of the body will never be read: the connection cannot serve another request
    entry.reply.header('connection', 'close')
    handleException(error, entry.request, entry.reply)
  }

  // a route hook (plugins/kernel.ts gives it to the routes whose methods take a body): GET
  // requests never pay for it
  function kernelBodyTimeout (request: FastifyRequest, reply: FastifyReply, payload: RequestPayload, done: (error: Error | null, payload?: RequestPayload) => void): void {
    if (!expectsBody(request) || request.raw.complete) {
      done(null, payload)
      return
    }
    const raw = request.raw
    const entry: PendingBody = { request, reply, stop }
    const timer = setTimeout(() => {
      answer(entry, new RequestTimeoutHttpException(`The request body did not arrive within ${timeoutMs} ms.`))
    }, timeoutMs)
    function stop (): void {
      clearTimeout(timer)
      raw.off('end', stop)
      raw.off('close', stop)
      pending.delete(entry)
    }
    raw.once('end', stop)
    raw.once('close', stop)
    pending.add(entry)
    done(null, payload)
  }

  app.addHook('preClose', function kernelStopWaitingForBodies (done) {
    for (const entry of [...pending]) {
      answer(entry, new ServiceUnavailableHttpException('The server is shutting down.', undefined, 1))
    }
    done()
  })
  return kernelBodyTimeout
}

export type BodyTimeoutHook = (request: FastifyRequest, reply: FastifyReply, payload: RequestPayload, done: (error: Error | null, payload?: RequestPayload) => void) => void
