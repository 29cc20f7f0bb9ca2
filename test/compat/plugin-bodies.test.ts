/**
 * Bodies other plugins build reach JSON clients as built, with their status and headers:
 * @fastify/rate-limit's `errorResponseBuilder` result and @fastify/compress's
 * `onUnsupportedRequestEncoding` answer are thrown plain objects. HTML clients get the kernel's
 * page with a readable message, never `[object Object]`.
 */
import t from 'tap'
import Fastify from 'fastify'
import type { FastifyInstance } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import compress from '@fastify/compress'
import kernel, { kernelServerOptions } from '../../index.js'
import type { KernelOptions } from '../../index.js'

const host = 'example.test'
const limited = { statusCode: 429, code: 'SLOW_DOWN', error: 'Too Many Requests', message: 'Slow down, retry in 1 minute', retryIn: 60 }
const unsupported = { statusCode: 415, code: 'UNSUPPORTED', error: 'Unsupported Media Type', message: 'We do not support the zz encoding.' }

async function build (order: 'kernel first' | 'kernel last', options: KernelOptions): Promise<FastifyInstance> {
  const app = Fastify(kernelServerOptions())
  if (order === 'kernel first') await app.register(kernel, options)
  await app.register(rateLimit, { max: 1, timeWindow: '1 minute', errorResponseBuilder: () => limited })
  // typed as returning an Error; its README returns a plain object, as here
  await app.register(compress, { onUnsupportedRequestEncoding: () => unsupported as never })
  if (order === 'kernel last') await app.register(kernel, options)
  app.get('/limited', async () => 'ok')
  app.post('/upload', { config: { rateLimit: { max: 100, timeWindow: '1 minute' } } }, async (request) => request.body)
  await app.ready()
  return app
}

for (const order of ['kernel first', 'kernel last'] as const) {
  for (const jsonErrors of ['problem', 'fastify'] as const) {
    for (const debug of [true, false]) {
      t.test(`${order}, jsonErrors ${jsonErrors}, debug ${debug}: other plugins' bodies`, async (t) => {
        const app = await build(order, { debug, profiler: false, jsonErrors })
        t.teardown(() => app.close())
        t.equal((await app.inject({ url: '/limited', headers: { host } })).statusCode, 200)
        const json = await app.inject({ url: '/limited', headers: { host, accept: 'application/json' } })
        t.equal(json.statusCode, 429)
        t.same(json.json(), limited, 'rate-limit\'s body as its builder made it')
        t.equal(json.headers['retry-after'], '60', 'rate-limit\'s headers')
        t.equal(json.headers['x-ratelimit-limit'], '1')
        const html = await app.inject({ url: '/limited', headers: { host, accept: 'text/html' } })
        t.equal(html.statusCode, 429)
        t.match(html.headers['content-type'], /^text\/html/)
        t.notMatch(html.body, '[object Object]')
        if (debug) t.match(html.body, 'Slow down, retry in 1 minute', 'the page reads the body\'s message')
        else t.match(html.body, 'The server returned a "429 Too Many Requests".')
        t.equal(html.headers['retry-after'], '60')

        const upload = await app.inject({ method: 'POST', url: '/upload', headers: { host, accept: 'application/json', 'content-encoding': 'zz', 'content-type': 'application/json' }, payload: '{}' })
        t.equal(upload.statusCode, 415)
        t.same(upload.json(), unsupported, 'compress\'s body as its handler made it')
        const page = await app.inject({ method: 'POST', url: '/upload', headers: { host, 'content-encoding': 'zz', 'content-type': 'application/json' }, payload: '{}' })
        t.equal(page.statusCode, 415)
        if (debug) t.match(page.body, 'We do not support the zz encoding.')
        t.notMatch(page.body, '[object Object]')
        // compress's own feature: a compressed request body is read, a response compressed
        const gzipped = await app.inject({ method: 'POST', url: '/upload', headers: { host, 'content-encoding': 'gzip', 'content-type': 'application/json' }, payload: (await import('node:zlib')).gzipSync('{"a":1}') })
        t.same(gzipped.json(), { a: 1 })
      })
    }
  }
}
