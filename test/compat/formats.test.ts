/**
 * A JSON API gets JSON errors: a route's `config.format` (Symfony's `_format`), the `format`
 * option for the app or a prefix, and `jsonErrors: 'fastify'` for clients that read Fastify's
 * own error shape. No preference at all keeps Symfony's HTML.
 */
import t from 'tap'
import Fastify from 'fastify'
import type { FastifyInstance } from 'fastify'
import sensible from '@fastify/sensible'
import kernel, { kernelServerOptions } from '../../index.js'
import type { KernelOptions } from '../../index.js'

const host = 'example.test'
const itemSchema = { body: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } }

/** The same routes, with or without the kernel (`null`: bare Fastify, whose answers are the reference). */
async function build (options: KernelOptions | null): Promise<FastifyInstance> {
  const app = Fastify(kernelServerOptions())
  if (options !== null) await app.register(kernel, { profiler: false, ...options })
  await app.register(sensible)
  app.get('/page', async () => { throw app.httpErrors.badRequest('bad page') })
  app.get('/api/declared', { config: { format: 'json' } }, async () => { throw app.httpErrors.badRequest('bad input') })
  app.post('/api/items', { schema: itemSchema }, async () => 'created')
  app.get('/api/missing', async (_request, reply) => reply.notFound())
  app.get('/api/teapot', async () => { throw app.httpErrors.createError(418, 'short and stout', { expose: false }) })
  app.get('/api/boom', async () => { throw new Error('database password is hunter2') })
  app.get('/api/html', { config: { format: 'html' } }, async () => { throw app.httpErrors.badRequest('an html route') })
  // a prefix that says it once, in its own encapsulated plugin
  await app.register(async (v2) => {
    v2.addHook('onRoute', (route) => { route.config = { format: 'json', ...route.config } })
    v2.get('/thing', async () => { throw v2.httpErrors.conflict('taken') })
  }, { prefix: '/v2' })
  await app.ready()
  return app
}

t.test('config.format: an explicit format wins over Accept; no preference keeps HTML', async (t) => {
  for (const debug of [true, false]) {
    const app = await build({ debug })
    t.teardown(() => app.close())
    for (const accept of [undefined, '*/*', 'text/html']) {
      const headers = accept === undefined ? { host } : { host, accept }
      const declared = await app.inject({ url: '/api/declared', headers })
      t.equal(declared.statusCode, 400)
      // RFC 9457: a client that takes any type takes problem+json; one that asks for HTML, plain JSON
      const json = accept === 'text/html' ? 'application/json' : 'application/problem+json'
      t.equal(declared.headers['content-type'], json, `debug ${debug}, Accept ${accept}: JSON`)
      t.equal(declared.json().detail, debug ? 'bad input' : 'Bad Request')
      t.equal(declared.headers.vary, 'Accept')
      const page = await app.inject({ url: '/page', headers })
      t.match(page.headers['content-type'], /^text\/html/, `debug ${debug}, Accept ${accept}: a route without a format keeps HTML`)
      const prefixed = await app.inject({ url: '/v2/thing', headers })
      t.equal(prefixed.statusCode, 409)
      t.equal(prefixed.headers['content-type'], json, 'a prefix that set its routes\' format')
    }
    const problem = await app.inject({ url: '/api/declared', headers: { host, accept: 'application/problem+json' } })
    t.equal(problem.headers['content-type'], 'application/problem+json', 'Accept still picks problem+json among the JSON formats')
  }
})

t.test('the format option: the whole app, or by prefix (misses included)', async (t) => {
  const byPrefix = await build({ debug: true, format: { '/api': 'json' } })
  const whole = await build({ debug: false, format: 'json' })
  t.teardown(async () => { await byPrefix.close(); await whole.close() })
  const miss = await byPrefix.inject({ url: '/api/nope', headers: { host } })
  t.equal(miss.statusCode, 404)
  t.equal(miss.json().detail, 'No route found for "GET http://example.test/api/nope"', 'the exact routing message, in JSON')
  const put = await byPrefix.inject({ method: 'PUT', url: '/api/items', headers: { host } })
  t.equal(put.statusCode, 405)
  t.equal(put.headers.allow, 'POST')
  t.equal(put.headers['content-type'], 'application/problem+json')
  t.match((await byPrefix.inject({ url: '/apiary', headers: { host } })).headers['content-type'], /^text\/html/, '/apiary is not under /api')
  t.match((await byPrefix.inject({ url: '/page', headers: { host } })).headers['content-type'], /^text\/html/)
  t.match((await byPrefix.inject({ url: '/api/html', headers: { host, accept: 'application/json' } })).headers['content-type'], /^text\/html/, 'a route\'s own format wins over the prefix\'s')
  const anywhere = await whole.inject({ url: '/nope', headers: { host, accept: 'text/html' } })
  t.same(anywhere.json(), { type: 'https://tools.ietf.org/html/rfc2616#section-10', title: 'An error occurred', status: 404, detail: 'Not Found' })
  const slash = await whole.inject({ url: '/api/declared/', headers: { host } })
  t.equal(slash.statusCode, 301, 'a redirect stays a redirect')
})

t.test("jsonErrors: 'fastify' answers as bare Fastify does", async (t) => {
  const bare = await build(null)
  t.teardown(() => bare.close())
  for (const debug of [true, false]) {
    const app = await build({ debug, jsonErrors: 'fastify', format: { '/api': 'json' } })
    t.teardown(() => app.close())
    for (const [method, url, payload] of [['POST', '/api/items', { nope: 1 }], ['GET', '/api/missing', undefined], ['GET', '/api/declared', undefined]] as const) {
      const expected = await bare.inject({ method, url, payload, headers: { host } })
      const res = await app.inject({ method, url, payload, headers: { host } })
      t.equal(res.statusCode, expected.statusCode, `${method} ${url}`)
      t.same(res.json(), expected.json(), `debug ${debug}, ${method} ${url}: Fastify's own body`)
      t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
    }
    const crash = await app.inject({ url: '/api/boom', headers: { host } })
    t.equal(crash.statusCode, 500)
    t.same(crash.json(), { statusCode: 500, error: 'Internal Server Error', message: debug ? 'database password is hunter2' : 'Internal Server Error' }, 'a production 5xx tells no message')
    const hidden = await app.inject({ url: '/api/teapot', headers: { host } })
    t.equal(hidden.json().message, debug ? 'short and stout' : "I'm a Teapot", 'http-errors\' expose: false is honoured')
    const miss = await app.inject({ url: '/api/nope', headers: { host } })
    t.same(miss.json(), { statusCode: 404, error: 'Not Found', message: 'No route found for "GET http://example.test/api/nope"' })
    t.equal(miss.headers.vary, 'Accept')
    const problem = await app.inject({ url: '/api/nope', headers: { host, accept: 'application/problem+json' } })
    t.equal(problem.json().status, 404, 'a client asking for problem+json still gets it')
    t.match((await app.inject({ url: '/page', headers: { host } })).headers['content-type'], /^text\/html/, 'HTML pages stay')
  }
})

t.test('a route format that is not json or html fails its registration', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(kernel)
  t.throws(() => app.get('/x', { config: { format: 'xml' as 'json' } }, async () => 'x'), { code: 'KERNEL_INVALID_OPTIONS', message: /config\.format must be "json" or "html"/ })
  await t.rejects(async () => { await Fastify().register(kernel, { format: 'xml' as 'json' }).ready() }, { message: /option "format" must be/ })
  await t.rejects(async () => { await Fastify().register(kernel, { format: { api: 'json' } }).ready() }, { message: /format/ })
})
