/**
 * The compatibility suite: an app as fastify-cli and the ecosystem build it (sensible, static,
 * compress, rate-limit with errorResponseBuilder, formbody, cookie, helmet, cors, swagger,
 * under-pressure, websocket, multipart, jwt), the kernel registered first or last among the
 * plugins, the routes after them. Each plugin's own feature still works, the kernel's answers stay
 * exact, errors keep their status and headers, and with `jsonErrors: 'fastify'` every plugin's
 * own JSON error is the one bare Fastify sends.
 */
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import Fastify from 'fastify'
import type { FastifyInstance, InjectOptions } from 'fastify'
import sensible from '@fastify/sensible'
import fastifyStatic from '@fastify/static'
import compress from '@fastify/compress'
import rateLimit from '@fastify/rate-limit'
import formbody from '@fastify/formbody'
import cookie from '@fastify/cookie'
import helmet from '@fastify/helmet'
import cors from '@fastify/cors'
import swagger from '@fastify/swagger'
import underPressure from '@fastify/under-pressure'
import websocket from '@fastify/websocket'
import multipart from '@fastify/multipart'
import jwt from '@fastify/jwt'
import kernel, { kernelServerOptions } from '../../index.js'
import type { KernelOptions } from '../../index.js'

const host = 'example.test'
const origin = 'https://front.test'
const root = mkdtempSync(join(tmpdir(), 'kernel-compat-'))
t.teardown(() => rmSync(root, { recursive: true, force: true }))
writeFileSync(join(root, 'app.css'), 'body { color: red }')

type Variant = 'bare' | 'kernel first' | 'kernel last'

/** The whole app; `bare` is the same app without the kernel, whose answers are Fastify's own. */
async function build (variant: Variant, options: KernelOptions = {}): Promise<FastifyInstance> {
  const app = Fastify(kernelServerOptions())
  const kernelOptions: KernelOptions = { profiler: false, ...options }
  if (variant === 'kernel first') await app.register(kernel, kernelOptions)
  await app.register(sensible)
  await app.register(cors, { origin: [origin] })
  await app.register(helmet)
  await app.register(cookie)
  await app.register(formbody)
  await app.register(compress, { threshold: 64 })
  await app.register(rateLimit, { max: 3, timeWindow: '1 minute', allowList: (request) => request.headers['x-limit'] === undefined })
  await app.register(fastifyStatic, { root, prefix: '/public' })
  await app.register(swagger, { openapi: { info: { title: 'compat', version: '1.0.0' } } })
  let healthy = true
  await app.register(underPressure, { exposeStatusRoute: '/status', healthCheck: async () => healthy, retryAfter: 7 })
  app.decorate('setHealthy', (value: boolean) => { healthy = value })
  await app.register(websocket)
  await app.register(multipart, { limits: { fileSize: 16 } })
  await app.register(jwt, { secret: 'a-compat-secret-that-is-long-enough' })
  if (variant === 'kernel last') await app.register(kernel, kernelOptions)

  app.get('/items', { schema: { querystring: { type: 'object', properties: { limit: { type: 'integer', maximum: 10 } } } } }, async () => ({ items: ['a'.repeat(100)] }))
  app.post('/items', { schema: { body: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } } }, async (request) => request.body)
  app.get('/blog/', async () => 'blog')
  app.post('/form', async (request) => request.body)
  app.get('/cookie', async (request, reply) => reply.setCookie('seen', 'yes', { path: '/' }).send({ cookies: request.cookies }))
  app.get('/conflict', async () => { throw app.httpErrors.conflict('already there') })
  app.get('/auth', async () => { throw app.httpErrors.createError(401, 'nope', { headers: { 'www-authenticate': 'Bearer realm="compat"' } }) })
  app.get('/limited', { config: { rateLimit: { max: 1, timeWindow: '1 minute' } } }, async () => 'ok')
  app.get('/me', { onRequest: async (request) => { await request.jwtVerify() } }, async (request) => ({ user: request.user }))
  app.post('/upload', async (request) => {
    const file = await request.file()
    const content = await file!.toBuffer()
    return { name: file!.filename, size: content.length }
  })
  // injectWS's request has no IP for rate-limit's key
  app.get('/ws', { websocket: true, config: { rateLimit: false } }, (socket) => { socket.on('message', (message: Buffer) => socket.send(`echo: ${message.toString()}`)) })
  await app.ready()
  return app
}

function multipartPayload (content: string): { payload: string, headers: Record<string, string> } {
  const boundary = '----kernelcompat'
  const payload = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n${content}\r\n--${boundary}--\r\n`
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }
}

for (const order of ['kernel first', 'kernel last'] as const) {
  for (const debug of [true, false]) {
    t.test(`${order}, debug ${debug}: every plugin's own feature`, async (t) => {
      const app = await build(order, { debug })
      t.teardown(() => app.close())
      const css = await app.inject({ url: '/public/app.css', headers: { host } })
      t.equal(css.body, 'body { color: red }', 'static serves its file')
      const items = await app.inject({ url: '/items', headers: { host, origin, 'accept-encoding': 'gzip' } })
      t.equal(items.headers['content-encoding'], 'gzip', 'compress compresses')
      t.same(JSON.parse(gunzipSync(items.rawPayload).toString()), { items: ['a'.repeat(100)] })
      t.equal(items.headers['access-control-allow-origin'], origin, 'cors')
      t.equal(items.headers['x-content-type-options'], 'nosniff', 'helmet')
      t.same((await app.inject({ method: 'POST', url: '/form', payload: 'a=1&b=two', headers: { host, 'content-type': 'application/x-www-form-urlencoded' } })).json(), { a: '1', b: 'two' }, 'formbody')
      const cookies = await app.inject({ url: '/cookie', headers: { host, cookie: 'theme=dark' } })
      t.same(cookies.json(), { cookies: { theme: 'dark' } }, 'cookie parses')
      t.match(String(cookies.headers['set-cookie']), /^seen=yes; Path=\//, 'and sets')
      const spec = app.swagger() as { paths: Record<string, unknown> }
      t.ok(spec.paths['/items'], 'swagger documents the routes')
      t.notOk(Object.keys(spec.paths).some((path) => path.startsWith('/_')), 'never the kernel\'s')
      t.same((await app.inject({ url: '/status', headers: { host } })).json(), { status: 'ok' }, 'under-pressure\'s status route')
      const token = app.jwt.sign({ sub: 'ada' })
      t.equal((await app.inject({ url: '/me', headers: { host, authorization: `Bearer ${token}` } })).json().user.sub, 'ada', 'jwt verifies')
      const form = multipartPayload('hello')
      const upload = await app.inject({ method: 'POST', url: '/upload', payload: form.payload, headers: { host, ...form.headers } })
      t.same(upload.json(), { name: 'a.txt', size: 5 }, 'multipart reads the file')
      const ws = await app.injectWS('/ws', { headers: { host } })
      const echoed = new Promise<string>((resolve) => ws.once('message', (data: Buffer) => resolve(data.toString())))
      ws.send('hi')
      t.equal(await echoed, 'echo: hi', 'websocket echoes')
      ws.terminate()
      t.equal((await app.inject({ url: '/limited', headers: { host, 'x-limit': '1' } })).statusCode, 200)
      t.equal((await app.inject({ url: '/limited', headers: { host, 'x-limit': '1' } })).statusCode, 429, 'rate-limit limits')
    })

    t.test(`${order}, debug ${debug}: the kernel's answers stay exact among them`, async (t) => {
      const app = await build(order, { debug })
      t.teardown(() => app.close())
      const json = { host, origin, accept: 'application/json' }
      const miss = await app.inject({ url: '/nope', headers: json })
      t.equal(miss.statusCode, 404)
      t.equal(miss.json().detail, debug ? 'No route found for "GET http://example.test/nope"' : 'Not Found')
      const put = await app.inject({ method: 'PUT', url: '/items', headers: json })
      t.equal(put.statusCode, 405)
      t.equal(put.headers.allow, 'GET, POST', 'no OPTIONS from cors\'s preflight route')
      const slash = await app.inject({ url: '/blog?x=1', headers: json })
      t.equal(slash.headers.location, 'http://example.test/blog/?x=1')
      t.equal((await app.inject({ url: '/public', headers: json })).statusCode, 404, 'static\'s wildcard is no redirect target')
      const missing = await app.inject({ url: '/public/missing.css', headers: json })
      t.equal(missing.statusCode, 404)
      t.equal(missing.json().detail, 'Not Found', 'a missing file is static\'s 404, not the router\'s')
      for (const res of [miss, put, slash, missing]) {
        t.equal(res.headers['access-control-allow-origin'], origin, `${res.statusCode}: cors`)
        t.equal(res.headers['x-content-type-options'], 'nosniff', `${res.statusCode}: helmet`)
        if (res !== slash) t.match(String(res.headers.vary), /Accept/)
      }
      // compress attaches itself to routes (bare Fastify's 404 is not compressed either)
      const gzipped = await app.inject({ url: '/conflict', headers: { host, accept: 'text/html', 'accept-encoding': 'gzip' } })
      t.equal(gzipped.statusCode, 409)
      t.equal(gzipped.headers['content-encoding'], 'gzip', 'a route\'s error page is compressed like its pages')
      t.match(gunzipSync(gzipped.rawPayload).toString(), debug ? 'already there' : 'Oops! An Error Occurred')

      const auth = await app.inject({ url: '/auth', headers: { host, accept: 'text/html' } })
      t.equal(auth.statusCode, 401)
      t.equal(auth.headers['www-authenticate'], 'Bearer realm="compat"', 'sensible\'s error keeps its header')
      const app2 = app as FastifyInstance & { setHealthy: (value: boolean) => void }
      app2.setHealthy(false)
      const down = await app.inject({ url: '/status', headers: { host, accept: 'text/html' } })
      t.equal(down.statusCode, 503)
      t.equal(down.headers['retry-after'], '7', 'under-pressure\'s Retry-After')
      t.match(down.headers['content-type'], /^text\/html/)
      const noToken = await app.inject({ url: '/me', headers: { host, accept: 'text/html' } })
      t.equal(noToken.statusCode, 401, 'jwt\'s refusal')
      const tooLarge = await app.inject({ method: 'POST', url: '/upload', headers: { host, accept: 'text/html', ...multipartPayload('x'.repeat(64)).headers }, payload: multipartPayload('x'.repeat(64)).payload })
      t.equal(tooLarge.statusCode, 413, 'multipart\'s limit')
      const invalid = await app.inject({ method: 'POST', url: '/items', headers: { host, accept: 'text/html' }, payload: {} })
      t.equal(invalid.statusCode, 400)
      t.notMatch(invalid.body, '[object Object]')
    })
  }

  t.test(`${order}: with jsonErrors 'fastify', each plugin's JSON error is bare Fastify's`, async (t) => {
    const bare = await build('bare') as FastifyInstance & { setHealthy: (value: boolean) => void }
    const app = await build(order, { debug: false, jsonErrors: 'fastify', format: 'json' }) as FastifyInstance & { setHealthy: (value: boolean) => void }
    t.teardown(async () => { await bare.close(); await app.close() })
    const upload = multipartPayload('x'.repeat(64))
    const requests: Array<[string, InjectOptions]> = [
      ['sensible', { url: '/conflict' }],
      ['sensible with headers', { url: '/auth' }],
      ['validation', { method: 'POST', url: '/items', payload: {} }],
      ['querystring validation', { url: '/items?limit=99' }],
      ['jwt', { url: '/me' }],
      ['jwt, bad token', { url: '/me', headers: { authorization: 'Bearer nope' } }],
      ['multipart', { method: 'POST', url: '/upload', payload: upload.payload, headers: upload.headers }],
      ['bad JSON', { method: 'POST', url: '/items', payload: '{"broken', headers: { 'content-type': 'application/json' } }],
      ['unsupported media type', { method: 'POST', url: '/items', payload: '<a/>', headers: { 'content-type': 'application/xml' } }],
      ['rate-limit', { url: '/limited', headers: { 'x-limit': '1' } }],
      ['rate-limit', { url: '/limited', headers: { 'x-limit': '1' } }]
    ]
    for (const [plugin, request] of requests) {
      const options = { ...request, headers: { host, ...request.headers } }
      const expected = await bare.inject(options)
      const actual = await app.inject(options)
      t.equal(actual.statusCode, expected.statusCode, `${plugin}: status`)
      t.same(actual.body, expected.body, `${plugin}: body`)
      t.equal(actual.headers['content-type'], expected.headers['content-type'], `${plugin}: content type`)
      for (const header of ['www-authenticate', 'retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining']) {
        t.equal(actual.headers[header], expected.headers[header], `${plugin}: ${header}`)
      }
    }
    bare.setHealthy(false)
    app.setHealthy(false)
    const expected = await bare.inject({ url: '/status', headers: { host } })
    const actual = await app.inject({ url: '/status', headers: { host } })
    t.equal(actual.statusCode, 503)
    t.same(actual.json(), expected.json(), 'under-pressure: body')
    t.equal(actual.headers['retry-after'], expected.headers['retry-after'])
  })
}
