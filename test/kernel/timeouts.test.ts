import t from 'tap'
import { connect } from 'node:net'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { createKernelApp, kernelServerOptions } from '../../index.js'
import { KERNEL_REQUEST_TIMEOUT } from '../../plugins/server-options.js'
import { CONNECTION_TIMEOUT } from '../../service/src/build-service.js'
import type { KernelOptions } from '../../index.js'

async function listening (kernel: KernelOptions): Promise<{ app: FastifyInstance, port: number, bodyAwaited: Promise<void> }> {
  const app = await createKernelApp({ kernel, fastify: { logger: false } })
  // runs after the kernel's own preParsing hooks: the upload is then waiting for its body
  let awaited: () => void
  const bodyAwaited = new Promise<void>((resolve) => { awaited = resolve })
  app.addHook('preParsing', async (request) => { if (request.url === '/upload') awaited() })
  app.post('/upload', async (request) => ({ received: (request.body as { data: string }).data.length }))
  await app.listen({ host: '127.0.0.1', port: 0 })
  return { app, port: (app.server.address() as { port: number }).port, bodyAwaited }
}

/** Sends the headers and part of a body, then nothing more; resolves with all the server wrote. */
function stalledUpload (port: number): { socket: Socket, answer: Promise<string> } {
  const socket = connect(port, '127.0.0.1')
  const body = JSON.stringify({ data: 'x'.repeat(100) })
  socket.write(`POST /upload HTTP/1.1\r\nHost: example.test\r\nAccept: application/json\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 20)}`)
  const answer = new Promise<string>((resolve) => {
    let text = ''
    socket.on('data', (chunk) => { text += String(chunk) })
    socket.on('close', () => resolve(text))
    socket.on('error', () => resolve(text))
  })
  return { socket, answer }
}

t.test('a body that stops arriving gets 408 through the error pages, and its connection is closed', async (t) => {
  const { app, port } = await listening({ debug: true, profiler: false, bodyTimeout: 200 })
  t.teardown(() => app.close())
  const { answer } = stalledUpload(port)
  const text = await answer
  t.match(text, /^HTTP\/1\.1 408 Request Timeout\r\n/)
  t.match(text, /\r\nconnection: close\r\n/i)
  t.match(text, /"detail":"The request body did not arrive within 200 ms\."/)
})

t.test('a complete body is not affected, and a body still arriving at close gets 503 at once', async (t) => {
  const { app, port } = await listening({ debug: false, bodyTimeout: 60_000 })
  const ok = await fetch(`http://127.0.0.1:${port}/upload`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data: 'abc' }) })
  t.same(await ok.json(), { received: 3 })
  const stalled = await listening({ debug: false, bodyTimeout: 60_000 })
  const { answer } = stalledUpload(stalled.port)
  await stalled.bodyAwaited
  await stalled.app.close()
  await app.close()
  const text = await answer
  t.match(text, /^HTTP\/1\.1 503 Service Unavailable\r\n/, 'answered, not left to hold the shutdown up')
  t.match(text, /\r\nretry-after: 1\r\n/i)
})

t.test('bodyTimeout 0 turns the kernel timer off; the option is validated', async (t) => {
  await t.rejects(createKernelApp({ kernel: { bodyTimeout: -1 }, fastify: { logger: false } }), { message: /option "bodyTimeout" must be >= 0/ })
  const app = await createKernelApp({ kernel: { bodyTimeout: 0 }, fastify: { logger: false } })
  t.teardown(() => app.close())
  await app.ready()
})

t.test('kernelServerOptions bound a whole request (Fastify alone: never); a socket timeout is the app\'s choice', async (t) => {
  const options = kernelServerOptions()
  t.equal(options.requestTimeout, KERNEL_REQUEST_TIMEOUT)
  t.equal((options as { connectionTimeout?: number }).connectionTimeout, undefined, 'not a per-request timer on every app')
  const app = await createKernelApp({ fastify: { logger: false } })
  t.teardown(() => app.close())
  t.equal(app.server.requestTimeout, KERNEL_REQUEST_TIMEOUT, "Node's server got it")
  const withSocketTimeout = await createKernelApp({ fastify: { logger: false, connectionTimeout: CONNECTION_TIMEOUT } })
  t.teardown(() => withSocketTimeout.close())
  t.equal(withSocketTimeout.server.timeout, CONNECTION_TIMEOUT, 'the socket timeout, as the service sets it')
  const custom = await createKernelApp({ fastify: { logger: false, requestTimeout: 5000 } })
  t.teardown(() => custom.close())
  t.equal(custom.server.requestTimeout, 5000, "the app's own value wins")
})
