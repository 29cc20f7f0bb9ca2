import t from 'tap'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import { kernel } from '../../index.js'
import { buildApp } from '../helpers.js'

/** One query parameter a name of the default list, each with a value found nowhere else. */
const NAMES = ['password', 'token', 'secret', 'api_key', 'auth', 'jwt', 'session', 'signature', 'credential', 'pin']
const VALUES = NAMES.map((name, i) => `v4lue-${i}-${name.replace('_', '')}`)
const QUERY = NAMES.map((name, i) => `${name}=${VALUES[i]}`).join('&')

/** A pino destination stream keeping every line the app logs. */
function capture (): { stream: Writable, text: () => string } {
  let text = ''
  const stream = new Writable({ write (chunk, _encoding, done) { text += String(chunk); done() } })
  return { stream, text: () => text }
}

for (const debug of [true, false]) {
  t.test(`${debug ? 'dev' : 'prod'}: the incoming request line masks every name of the list; other fields stay`, async (t) => {
    const logs = capture()
    const app = await buildApp({ debug }, { logger: { level: 'info', stream: logs.stream } })
    t.teardown(() => app.close())
    const res = await app.inject({ url: `/hello/ada?${QUERY}&page=2&author=ada&shipping=post` })
    t.equal(res.statusCode, 200)
    const incoming = logs.text().split('\n').filter((line) => line.includes('incoming request')).map((line) => JSON.parse(line) as { req: { url: string } })
    t.equal(incoming.length, 1)
    t.equal(incoming[0].req.url, `/hello/ada?${NAMES.map((name) => `${name}=******`).join('&')}&page=2&author=ada&shipping=post`)
    for (const value of VALUES) t.notMatch(logs.text(), value, `${value} is nowhere in the log`)
    // and a routing miss, a 500 and a profiler page say nothing more
    await app.inject({ url: `/nowhere?${QUERY}` })
    await app.inject({ url: `/boom?${QUERY}` })
    if (debug) await app.inject({ url: `/_profiler/?${QUERY}`, headers: { host: 'localhost' } })
    for (const value of VALUES) t.notMatch(logs.text(), value, `${value} is nowhere in the log after the misses`)
  })
}

t.test('routes added before the kernel, an app\'s own req serializer logging headers, the profiler\'s redact options', async (t) => {
  const logs = capture()
  const app = Fastify({
    logger: {
      level: 'info',
      stream: logs.stream,
      serializers: { req: (request: { url: string, headers: object }) => ({ url: request.url, headers: request.headers }) }
    }
  })
  app.get('/early', async () => 'early')
  await app.register(kernel, { debug: false, profiler: { redact: { names: ['X-Tenant', 'tenant'] } } })
  await app.ready()
  t.teardown(() => app.close())
  await app.inject({ url: '/early?token=t0k3n&tenant=acme&page=1', headers: { 'x-api-key': 'k-123', authorization: 'Bearer zzz', 'x-tenant': 'acme-h', accept: 'text/plain' } })
  const line = JSON.parse(logs.text().split('\n').find((l) => l.includes('incoming request'))!) as { req: { url: string, headers: Record<string, string> } }
  t.equal(line.req.url, '/early?token=******&tenant=******&page=1', 'a route the kernel never saw added, the configured names too')
  t.equal(line.req.headers['x-api-key'], '******')
  t.equal(line.req.headers.authorization, '******')
  t.equal(line.req.headers['x-tenant'], '******')
  t.equal(line.req.headers.accept, 'text/plain', 'other headers stay')
  t.notMatch(logs.text(), /t0k3n|acme|k-123|Bearer zzz/)
})

t.test('an app without a logger answers as before', async (t) => {
  const quiet = await buildApp({ debug: false }, { logger: false })
  t.teardown(() => quiet.close())
  t.equal((await quiet.inject({ url: '/hello/ada?token=x' })).statusCode, 200)
})
