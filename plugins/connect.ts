import { ServerResponse } from 'node:http'
import type { IncomingMessage, Server } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyInstance } from 'fastify'

/**
 * `CONNECT host:443 HTTP/1.1` never reaches Fastify: Node hands such a request to the server's
 * `'connect'` listeners, and closes the socket without a word when there are none. The kernel
 * listens, and routes the request like any other (the kernel's 404 for a method and path no
 * route serves, with the same stages, hooks and pages), then closes the connection: a CONNECT
 * connection is never reused. An application that handles CONNECT itself (a proxy) keeps it:
 * with another `'connect'` listener on the server, this one steps aside.
 */
export function answerConnectRequests (app: FastifyInstance): void {
  if ((app.initialConfig as { http2?: boolean }).http2 === true) return
  const server = app.server as Server
  function onConnect (request: IncomingMessage, socket: Duplex): void {
    if (server.listenerCount('connect') > 1) return
    socket.on('error', () => { socket.destroy() })
    const response = new ServerResponse(request)
    response.shouldKeepAlive = false
    response.assignSocket(socket as never)
    response.on('finish', () => {
      response.detachSocket(socket as never)
      socket.end()
    })
    app.routing(request, response)
  }
  server.on('connect', onConnect)
  app.addHook('onClose', (_instance, done) => {
    server.off('connect', onConnect)
    done()
  })
}
