import type { FastifyInstance } from 'fastify'

/** How often idle connections are closed once the grace is over, until none is left. */
const SWEEP_MS = 250

/**
 * Lets the keep-alive connections that are idle when the app starts closing carry one more
 * request, for `graceMs`. Node's `server.close()` destroys them at once (closeIdleConnections):
 * a client that took one from its pool just then sends its request into a closed socket and
 * gets ECONNRESET, with no status to act on. Kept open, the request reaches Fastify, which is
 * closing: 503 with `Connection: close` (its `return503OnClosing`), and the connection ends
 * after that answer. Once the grace is over the idle connections are closed as Node would, and
 * again every `SWEEP_MS` (requests that were running then end idle) until the server is closed.
 */
export function drainKeepAliveConnections (app: FastifyInstance, graceMs: number): void {
  app.addHook('preClose', (done) => {
    const server = app.server
    // Node calls it from server.close(); the prototype's method stays reachable through it
    server.closeIdleConnections = () => {}
    let sweep: NodeJS.Timeout | undefined
    const grace = setTimeout(() => {
      delete (server as { closeIdleConnections?: unknown }).closeIdleConnections
      server.closeIdleConnections()
      sweep = setInterval(() => { server.closeIdleConnections() }, SWEEP_MS)
    }, graceMs)
    server.once('close', () => {
      clearTimeout(grace)
      clearInterval(sweep)
    })
    done()
  })
}
