/**
 * JSON errors: problem details go as `application/problem+json` (RFC 9457) to a client that
 * accepts it and carry the error's `code`; in Fastify's shape a production 5xx hides its
 * message unless the app asks for bare Fastify's exact body (`exposeServerErrors`).
 */
import t from 'tap'
import Fastify from 'fastify'
import type { FastifyInstance } from 'fastify'
import sensible from '@fastify/sensible'
import kernel, { kernelServerOptions } from '../../index.js'
import type { KernelOptions } from '../../index.js'

const host = 'example.test'
const PROBLEM_TYPE = 'https://tools.ietf.org/html/rfc2616#section-10'

/** `null`: bare Fastify, the same routes without the kernel */
async function build (options: KernelOptions | null): Promise<FastifyInstance> {
  const app = Fastify(kernelServerOptions())
  if (options !== null) await app.register(kernel, { profiler: false, ...options })
  await app.register(sensible)
  app.post('/items', { schema: { body: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } } }, async (request) => request.body)
  app.get('/crash', async () => { throw new Error('the database password is hunter2') })
  app.get('/crash-coded', async () => { throw Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:5432'), { code: 'ECONNREFUSED' }) })
  app.get('/gateway', async () => { throw app.httpErrors.badGateway('upstream billing said no') })
  app.get('/unavailable', async () => { throw app.httpErrors.createError(503, 'maintenance until 10:00', { headers: { 'retry-after': '60' } }) })
  app.get('/conflict', async () => { throw app.httpErrors.conflict('already there') })
  // http-errors' `expose` said of one error: a 4xx kept from clients, a 5xx shown to them
  app.get('/hidden-4xx', async () => { throw app.httpErrors.createError(400, 'coupon GOLD-7 expired for account 4711', { expose: false }) })
  app.get('/shown-5xx', async () => { throw app.httpErrors.createError(503, 'back at 10:00', { expose: true }) })
  await app.ready()
  return app
}

t.test('problem details: application/problem+json for a client that accepts it, application/json for one that asks for JSON', async (t) => {
  for (const debug of [false, true]) {
    const app = await build({ debug, format: 'json' })
    t.teardown(() => app.close())
    const cases: Array<[string | undefined, string]> = [
      [undefined, 'application/problem+json'],
      ['*/*', 'application/problem+json'],
      ['application/*', 'application/problem+json'],
      ['application/problem+json', 'application/problem+json'],
      ['application/json, application/problem+json', 'application/json'],
      ['application/problem+json, application/json', 'application/problem+json'],
      ['application/json', 'application/json'],
      ['application/json, */*;q=0.8', 'application/json'],
      ['text/html', 'application/json']
    ]
    for (const [accept, type] of cases) {
      const res = await app.inject({ url: '/conflict', headers: accept === undefined ? { host } : { host, accept } })
      t.equal(res.statusCode, 409)
      t.equal(res.headers['content-type'], type, `debug ${debug}, Accept ${accept}`)
      t.match(res.json(), { type: PROBLEM_TYPE, status: 409 })
    }
  }
})

t.test('problem details carry the error\'s code as an extension member (not a production 5xx\'s)', async (t) => {
  const prod = await build({ debug: false })
  const debug = await build({ debug: true })
  t.teardown(async () => { await prod.close(); await debug.close() })
  const json = { host, accept: 'application/problem+json' }
  const invalid = await prod.inject({ method: 'POST', url: '/items', payload: {}, headers: json })
  t.same(invalid.json(), { type: PROBLEM_TYPE, title: 'An error occurred', status: 400, detail: 'Bad Request', code: 'FST_ERR_VALIDATION' })
  const again = await prod.inject({ method: 'POST', url: '/items', payload: '{"broken', headers: { ...json, 'content-type': 'application/json' } })
  t.equal(again.json().code, 'FST_ERR_CTP_INVALID_JSON_BODY', 'another 400, another code (production answers are cached by status and code)')
  t.equal((await prod.inject({ url: '/conflict', headers: json })).json().code, undefined, 'no code, no member')
  const crash = await prod.inject({ url: '/crash-coded', headers: json })
  t.same(crash.json(), { type: PROBLEM_TYPE, title: 'An error occurred', status: 500, detail: 'Internal Server Error' }, 'a production 5xx tells nothing internal')
  t.match((await debug.inject({ url: '/crash-coded', headers: json })).json(), { status: 500, detail: 'connect ECONNREFUSED 10.0.0.7:5432', code: 'ECONNREFUSED' }, 'debug tells it')
})

t.test('exposeServerErrors is a boolean, for Fastify\'s error shape', async (t) => {
  await t.rejects(build({ exposeServerErrors: 'yes' as never, jsonErrors: 'fastify' }), { code: 'KERNEL_INVALID_OPTIONS', message: /option "exposeServerErrors" must be boolean/ })
  await t.rejects(build({ exposeServerErrors: true }), { code: 'KERNEL_INVALID_OPTIONS', message: /option "exposeServerErrors" applies to Fastify's error shape: set jsonErrors: 'fastify' with it/ })
  const app = await build({ exposeServerErrors: false })
  await app.close()
})

t.test('jsonErrors \'fastify\' in production: 5xx hide their message by default; exposeServerErrors sends bare Fastify\'s bodies byte for byte', async (t) => {
  const bare = await build(null)
  const hiding = await build({ debug: false, format: 'json', jsonErrors: 'fastify' })
  const exposing = await build({ debug: false, format: 'json', jsonErrors: 'fastify', exposeServerErrors: true })
  t.teardown(async () => { await bare.close(); await hiding.close(); await exposing.close() })
  for (const url of ['/crash', '/crash-coded', '/gateway', '/unavailable']) {
    const expected = await bare.inject({ url, headers: { host } })
    const hidden = await hiding.inject({ url, headers: { host } })
    t.equal(hidden.statusCode, expected.statusCode, url)
    t.equal(hidden.json().message, hidden.json().error, `${url}: the status text by default`)
    t.not(hidden.body, expected.body)
    const exposed = await exposing.inject({ url, headers: { host } })
    t.equal(exposed.statusCode, expected.statusCode, url)
    t.equal(exposed.body, expected.body, `${url}: bare Fastify's body, byte for byte`)
    t.equal(exposed.headers['content-type'], expected.headers['content-type'])
    t.equal(exposed.headers['retry-after'], expected.headers['retry-after'])
  }
  for (const url of ['/conflict']) {
    const expected = await bare.inject({ url, headers: { host } })
    t.equal((await hiding.inject({ url, headers: { host } })).body, expected.body, `${url}: a 4xx is Fastify's either way`)
  }
})

t.test('http-errors\' expose: honoured by default; exposeServerErrors gives bare Fastify\'s bodies, which ignore it', async (t) => {
  const bare = await build(null)
  const hiding = await build({ debug: false, format: 'json', jsonErrors: 'fastify' })
  const exposing = await build({ debug: false, format: 'json', jsonErrors: 'fastify', exposeServerErrors: true })
  t.teardown(async () => { await bare.close(); await hiding.close(); await exposing.close() })
  const hidden4xx = await bare.inject({ url: '/hidden-4xx', headers: { host } })
  t.same(hidden4xx.json(), { statusCode: 400, error: 'Bad Request', message: 'coupon GOLD-7 expired for account 4711' }, 'bare Fastify sends the message of an expose: false error')
  t.same((await hiding.inject({ url: '/hidden-4xx', headers: { host } })).json(), { statusCode: 400, error: 'Bad Request', message: 'Bad Request' }, 'by default the kernel honours expose: false')
  const exposed = await exposing.inject({ url: '/hidden-4xx', headers: { host } })
  t.equal(exposed.statusCode, 400)
  t.equal(exposed.body, hidden4xx.body, 'exposeServerErrors: bare Fastify\'s body, byte for byte')
  const shown5xx = await bare.inject({ url: '/shown-5xx', headers: { host } })
  for (const app of [hiding, exposing]) {
    t.equal((await app.inject({ url: '/shown-5xx', headers: { host } })).body, shown5xx.body, 'a 5xx marked expose: true tells its message')
  }
})
