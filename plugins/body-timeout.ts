import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Kernel } from '../src/kernel/kernel.js'
import { RequestTimeoutHttpException, ServiceUnavailableHttpException } from '../src/errors/http-exceptions.js'

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
export function installBodyTimeout (app: FastifyInstance, kernel: Kernel, timeoutMs: number): void {
  if (timeoutMs <= 0) return
  const pending = new Set<PendingBody>()

  function answer (entry: PendingBody, error: Error): void {
    entry.stop()
    if (entry.reply.sent) return
    // the rest of the body will never be read: the connection cannot serve another request
    entry.reply.header('connection', 'close')
    kernel.handleException(error, entry.request, entry.reply)
  }

  app.addHook('preParsing', function kernelBodyTimeout (request, reply, payload, done) {
    // a miss never reads its body (the lifecycle drops it)
    if (!expectsBody(request) || request.raw.complete || request.kernel?.routingError !== undefined) {
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
  })

  app.addHook('preClose', function kernelStopWaitingForBodies (done) {
    for (const entry of [...pending]) {
      answer(entry, new ServiceUnavailableHttpException('The server is shutting down.', undefined, 1))
    }
    done()
  })
}
