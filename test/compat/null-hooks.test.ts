/**
 * A route that declares a hook option as null (`onRequest: null`, `preParsing: null`,
 * `onSend: null`), as @fastify/compress's own test suite does: with compress registered, bare
 * Fastify starts (compress replaces the null with its hook; Fastify refuses a null hook), and so
 * does the app with the kernel, registered before or after compress.
 */
import t from 'tap'
import { gunzipSync } from 'node:zlib'
import Fastify from 'fastify'
import type { FastifyInstance } from 'fastify'
import compress from '@fastify/compress'
import kernel, { kernelServerOptions } from '../../index.js'

const host = 'example.test'
const big = { items: 'a'.repeat(2000) }

async function build (variant: 'bare' | 'kernel first' | 'kernel last'): Promise<FastifyInstance> {
  const app = Fastify(kernelServerOptions())
  if (variant === 'kernel first') await app.register(kernel, { profiler: false })
  await app.register(compress, { threshold: 64 })
  if (variant === 'kernel last') await app.register(kernel, { profiler: false })
  // the hooks compress sets on every route, replacing a null (Fastify itself refuses a null hook)
  const nulls = { onRequest: null, preParsing: null, onSend: null } as Record<string, null>
  app.get('/null-hooks', nulls, async () => big)
  app.post('/null-hooks', nulls, async (request) => request.body)
  await app.ready()
  return app
}

for (const variant of ['bare', 'kernel first', 'kernel last'] as const) {
  t.test(`${variant}: routes declared with null hooks start and answer`, async (t) => {
    const app = await build(variant)
    t.teardown(() => app.close())
    const got = await app.inject({ url: '/null-hooks', headers: { host, 'accept-encoding': 'gzip' } })
    t.equal(got.statusCode, 200)
    t.equal(got.headers['content-encoding'], 'gzip', 'compress\'s own hooks run')
    t.same(JSON.parse(gunzipSync(got.rawPayload).toString()), big)
    const posted = await app.inject({ method: 'POST', url: '/null-hooks', payload: { name: 'ada' }, headers: { host } })
    t.same(posted.json(), { name: 'ada' }, 'a body is read')
    const put = await app.inject({ method: 'PUT', url: '/null-hooks', headers: { host, accept: 'application/json' } })
    t.equal(put.statusCode, variant === 'bare' ? 404 : 405, variant === 'bare' ? 'Fastify\'s 404' : 'the kernel\'s 405 among them')
    if (variant !== 'bare') t.equal(put.headers.allow, 'GET, POST')
  })
}
