import t from 'tap'
import { Writable } from 'node:stream'
import { buildApp } from '../helpers.js'
import { host } from './helpers.js'
import { PROXY_HEADERS } from '../../src/profiler/proxy-headers.js'

/** An app whose warn-and-above log lines are kept. */
async function loggedApp (fastify: Record<string, unknown> = {}) {
  const lines: Array<{ level: number, msg: string, header?: string }> = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const app = await buildApp({ debug: true }, { logger: { level: 'warn', stream }, ...fastify })
  return { app, warnings: () => lines.filter((line) => line.level === 40 && line.msg.includes('came through a proxy')) }
}

t.test('trustProxy off: a profiler request carrying a proxy header gets the ordinary 404, whatever the address; one warning', async (t) => {
  const { app, warnings } = await loggedApp()
  t.teardown(() => app.close())
  const without = await buildApp({ debug: true, profiler: false })
  t.teardown(() => without.close())

  for (const header of PROXY_HEADERS) {
    for (const url of ['/_profiler/', '/_profiler/latest', '/_profiler/abcdef']) {
      // a reverse proxy on the same host: the socket peer is loopback, allowed by default
      const headers = { host, accept: 'application/json', [header]: header === 'forwarded' ? 'for=198.51.100.7' : header === 'via' ? '1.1 proxy' : '198.51.100.7' }
      const refused = await app.inject({ url, headers, remoteAddress: '127.0.0.1' })
      const absent = await without.inject({ url, headers, remoteAddress: '127.0.0.1' })
      t.equal(refused.statusCode, 404, `${header} ${url}`)
      t.same({ ...refused.json(), trace: undefined }, { ...absent.json(), trace: undefined }, `${header} ${url}: the 404 of a path no route serves`)
      t.match(refused.headers['x-debug-token'], /^[0-9a-f]{6}$/, 'profiled like any 404')
    }
  }
  t.equal(warnings().length, 1, 'the warning is logged once')
  t.match(warnings()[0].msg, /trustProxy.*TRUST_PROXY.*allowedNetworks/)
  t.equal(warnings()[0].header, 'forwarded')

  t.equal((await app.inject({ url: '/_profiler/', headers: { host }, remoteAddress: '127.0.0.1' })).statusCode, 200, 'without proxy headers, a local client still opens it')
  t.equal((await app.inject({ url: '/hello/x', headers: { host, 'x-forwarded-for': '198.51.100.7' } })).statusCode, 200, 'the app itself is not affected')
})

t.test('trustProxy on: the forwarded client address decides, the headers are expected', async (t) => {
  const { app, warnings } = await loggedApp({ trustProxy: '127.0.0.1' })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/_profiler/', headers: { host, 'x-forwarded-for': '10.1.2.3', via: '1.1 proxy' } })).statusCode, 200, 'a private client behind the trusted proxy')
  t.equal((await app.inject({ url: '/_profiler/', headers: { host, 'x-forwarded-for': '198.51.100.7' } })).statusCode, 404, 'an Internet client behind it')
  t.equal(warnings().length, 0)
})

/** A raw request over a real socket, answered and closed: the whole answer. */
async function rawRequest (port: number, lines: string[]): Promise<string> {
  const { connect } = await import('node:net')
  const socket = connect(port, '127.0.0.1')
  let text = ''
  socket.on('data', (chunk: Buffer) => { text += chunk.toString() })
  socket.write(lines.join('\r\n') + '\r\n\r\n')
  await new Promise((resolve) => socket.on('close', resolve))
  return text
}

t.test('trustProxy off: a local peer naming a public host, or speaking HTTP/1.0, is a proxy that adds no header: 404, no toolbar, one warning', async (t) => {
  const lines: Array<{ level: number, msg: string }> = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const app = await buildApp({ debug: true }, { logger: { level: 'warn', stream } }, (app) => {
    app.get('/page', async (_request, reply) => reply.type('text/html').send('<html><body><p>page</p></body></html>'))
  })
  t.teardown(() => app.close())
  const warnings = () => lines.filter((line) => line.level === 40 && line.msg.includes('the profiler refused a request from'))

  for (const [peer, name] of [['127.0.0.1', 'example.com'], ['127.0.0.1', 'example.com:8000'], ['::1', 'shop.example.org'], ['172.17.0.1', 'app'], ['10.0.0.5', '203.0.113.9']]) {
    const refused = await app.inject({ url: '/_profiler/', headers: { host: name }, remoteAddress: peer })
    t.equal(refused.statusCode, 404, `${peer} naming ${name}: refused`)
    const html = await app.inject({ url: '/page', headers: { host: name }, remoteAddress: peer })
    t.notMatch(html.body, 'kwdt', `${peer} naming ${name}: no toolbar`)
  }
  t.equal(warnings().length, 1, 'one warning')
  t.match(warnings()[0].msg, /names the host "example\.com".*X-Forwarded-For.*trustProxy.*profiler\.allowedHosts \(PROFILER_ALLOWED_HOSTS\)/)

  // what a developer's browser names: this machine, a container from its host, a LAN address
  for (const [peer, name] of [['127.0.0.1', 'localhost:8000'], ['127.0.0.1', '127.0.0.1:8000'], ['::1', '[::1]:8000'], ['127.0.0.1', 'LocalHost.'], ['127.0.0.1', 'myapp.localhost'], ['127.0.0.1', 'myapp.test'], ['172.17.0.1', '172.17.0.2:8000'], ['192.168.1.20', '192.168.1.10:8000'], ['::ffff:10.0.0.2', '[fd00::1]:8000']]) {
    t.equal((await app.inject({ url: '/_profiler/', headers: { host: name }, remoteAddress: peer })).statusCode, 200, `${peer} naming ${name}: opened`)
    t.match((await app.inject({ url: '/page', headers: { host: name }, remoteAddress: peer })).body, 'kwdt', `${peer} naming ${name}: the toolbar`)
  }

  // nginx's default proxy_pass to 127.0.0.1:8000: HTTP/1.0, Host the upstream's, no header
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port
  const viaNginx = await rawRequest(port, ['GET /_profiler/ HTTP/1.0', `Host: 127.0.0.1:${port}`, 'Connection: close'])
  t.match(viaNginx, /^HTTP\/1\.1 404 /, 'HTTP/1.0 is refused')
  const direct = await rawRequest(port, ['GET /_profiler/ HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Connection: close'])
  t.match(direct, /^HTTP\/1\.1 200 /, 'HTTP/1.1 from the same peer opens it')
  t.equal(warnings().length, 1, 'the warning was logged once, for the first refusal only')
})

t.test('allowedHosts opens the profiler for more names; trustProxy on leaves the Host to the proxy; bad names are refused at register', async (t) => {
  const listed = await buildApp({ debug: true, profiler: { allowedHosts: ['DevBox.lan'] } })
  t.teardown(() => listed.close())
  t.equal((await listed.inject({ url: '/_profiler/', headers: { host: 'devbox.lan:8000' }, remoteAddress: '192.168.1.20' })).statusCode, 200)
  t.equal((await listed.inject({ url: '/_profiler/', headers: { host: 'other.lan:8000' }, remoteAddress: '192.168.1.20' })).statusCode, 404)
  const trusted = await buildApp({ debug: true }, { trustProxy: '127.0.0.1' })
  t.teardown(() => trusted.close())
  t.equal((await trusted.inject({ url: '/_profiler/', headers: { host: 'staging.example.com', 'x-forwarded-for': '10.1.2.3' } })).statusCode, 200, 'the trusted proxy reports a private client')
  await t.rejects(buildApp({ debug: true, profiler: { allowedHosts: ['devbox.lan:8000', 'http://x', 'ok.lan', '[fd00::1]'] } }), {
    code: 'KERNEL_INVALID_OPTIONS',
    message: 'option "profiler.allowedHosts": not a host name (no scheme, port or path; an IPv6 address in brackets): "devbox.lan:8000", "http://x"'
  })
})
