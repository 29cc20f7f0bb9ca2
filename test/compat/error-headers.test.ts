/**
 * Errors keep the headers they carry (Fastify's convention: `error.headers`), on every page and
 * in every mode, as bare Fastify sends them; only content type and length are the page's own.
 */
import t from 'tap'
import Fastify from 'fastify'
import sensible from '@fastify/sensible'
import kernel, { kernelServerOptions } from '../../index.js'
import { TooManyRequestsHttpException } from '../../src/errors/exceptions.js'

const host = 'example.test'
const ACCEPTS = { html: 'text/html', json: 'application/json', none: undefined } as const

/** @fastify/sensible before or after the kernel; the routes after both (README: "One limit"). */
async function build (debug: boolean, order: 'kernel first' | 'kernel last') {
  const app = Fastify(kernelServerOptions())
  if (order === 'kernel first') await app.register(kernel, { debug, profiler: false })
  await app.register(sensible)
  if (order === 'kernel last') await app.register(kernel, { debug, profiler: false })
  await app.register(async (routes) => {
    routes.get('/sensible', async () => {
      throw routes.httpErrors.createError(401, 'nope', { headers: { 'www-authenticate': 'Bearer realm="x"' } })
    })
    routes.get('/busy', async () => {
      throw Object.assign(new Error('busy'), { statusCode: 503, headers: { 'retry-after': '30', 'content-type': 'text/evil', 'x-bad': 'a\nb', 'x-many': ['a', 'b'] } })
    })
    routes.get('/kernel-own', async () => { throw new TooManyRequestsHttpException(12, 'slow down') })
  })
  await app.ready()
  return app
}

for (const order of ['kernel first', 'kernel last'] as const) {
  for (const debug of [true, false]) {
    t.test(`${order}, debug ${debug}: error headers reach the client on every page`, async (t) => {
      const app = await build(debug, order)
      t.teardown(() => app.close())
      for (const [format, accept] of Object.entries(ACCEPTS)) {
        const headers = accept === undefined ? { host } : { host, accept }
        const denied = await app.inject({ url: '/sensible', headers })
        t.equal(denied.statusCode, 401, `${format}: sensible's status`)
        t.equal(denied.headers['www-authenticate'], 'Bearer realm="x"', `${format}: sensible's header`)
        const busy = await app.inject({ url: '/busy', headers })
        t.equal(busy.statusCode, 503)
        t.equal(busy.headers['retry-after'], '30', `${format}: a plain error's header`)
        t.equal(busy.headers['x-many'], 'a, b', `${format}: a list of values`)
        t.notOk('x-bad' in busy.headers, `${format}: a value Node would refuse is left out, not a crash`)
        t.notMatch(String(busy.headers['content-type']), /evil/, `${format}: the content type is the page's`)
        t.match(String(busy.headers.vary), /Accept/, `${format}: Vary: Accept stays`)
        const own = await app.inject({ url: '/kernel-own', headers })
        t.equal(own.statusCode, 429)
        t.equal(own.headers['retry-after'], '12', `${format}: the kernel's own exception keeps its header`)
      }
    })
  }
}
