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
