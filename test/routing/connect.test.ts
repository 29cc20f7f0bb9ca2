// CONNECT never reaches Fastify (Node emits 'connect' instead): the kernel answers it like any
// other method no route serves, over a real socket
import t from 'tap'
import net from 'node:net'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../helpers.js'

/** Sends one request as written and reads until the server closes the connection. */
function send (port: number, head: string): Promise<{ text: string, closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(head))
    let text = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => { text += chunk })
    socket.on('error', reject)
    socket.on('close', () => resolve({ text, closed: true }))
  })
}

async function listen (debug: boolean, more?: (app: FastifyInstance) => void): Promise<{ app: FastifyInstance, port: number }> {
  const app = await buildApp({ debug }, {}, more)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, port: (app.server.address() as net.AddressInfo).port }
}

t.test('CONNECT host:port gets the kernel 404, then the connection is closed', async (t) => {
  const { app, port } = await listen(true)
  t.teardown(() => app.close())
  const { text } = await send(port, 'CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\nAccept: application/json\r\n\r\n')
  t.match(text, /^HTTP\/1\.1 404 Not Found\r\n/)
  t.match(text, /\r\nconnection: close\r\n/i)
  const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { detail: string }
  t.equal(body.detail, 'No route found for "CONNECT http://example.test:443/example.test:443"', 'the authority is the path, as Symfony reads it')
  t.match(text, /\r\nx-debug-token: [0-9a-f]{6}\r\n/, 'it went through the kernel\'s stages (profiled)')
})

t.test('CONNECT on a path with routes is a 405 naming them; production pages', async (t) => {
  const { app, port } = await listen(false)
  t.teardown(() => app.close())
  const { text } = await send(port, 'CONNECT /form HTTP/1.1\r\nHost: example.test\r\n\r\n')
  t.match(text, /^HTTP\/1\.1 405 Method Not Allowed\r\n/)
  t.match(text, /\r\nallow: GET, POST, PUT\r\n/i)
  t.match(text, 'The server returned a "405 Method Not Allowed".')
})

t.test('an application listening to CONNECT itself keeps it', async (t) => {
  const { app, port } = await listen(false, (app) => {
    app.server.on('connect', (_request: unknown, socket: net.Socket) => {
      socket.end('HTTP/1.1 200 Connection Established\r\n\r\n')
    })
  })
  t.teardown(() => app.close())
  const { text } = await send(port, 'CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n')
  t.equal(text, 'HTTP/1.1 200 Connection Established\r\n\r\n')
})
