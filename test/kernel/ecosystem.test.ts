import t from 'tap'
import Fastify from 'fastify'
import type { FastifyInstance } from 'fastify'
import cors from '@fastify/cors'
import helmet from '@fastify/helmet'
import rateLimit from '@fastify/rate-limit'
import kernel, { kernelServerOptions, Stage, Priority } from '../../index.js'
import type { KernelOptions } from '../../index.js'

const host = 'example.test'
const json = { host, accept: 'application/json' }

type Order = 'kernel first' | 'kernel last'

/** A small app with the plugins almost every Fastify app has, the kernel before or after them. */
async function buildEcosystemApp (order: Order, options: KernelOptions = { debug: false }, more?: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const app = Fastify(kernelServerOptions())
  const plugins = async (): Promise<void> => {
    // a list of origins: cors answers with the request's own, and so adds Vary: Origin
    await app.register(cors, { origin: ['https://front.test', 'https://admin.front.test'] })
    await app.register(helmet)
    await app.register(rateLimit, { max: 1000, timeWindow: '1 minute' })
  }
  if (order === 'kernel first') await app.register(kernel, options)
  // an app hook and routes registered before the kernel when it comes last
  app.addHook('onRequest', async (_request, reply) => { reply.header('x-app-hook', 'ran') })
  await plugins()
  app.get('/items', { config: { name: 'items' } }, async () => ['a'])
  app.post('/items', { schema: { body: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } } }, async () => 'created')
  app.get('/blog/', async () => 'blog')
  await app.register(async (api) => {
    api.get('/users/:id', async () => 'user')
    api.options('/users/:id', async () => 'options of a user')
  }, { prefix: '/api' })
  if (order === 'kernel last') await app.register(kernel, options)
  more?.(app)
  await app.ready()
  return app
}

for (const order of ['kernel first', 'kernel last'] as const) {
  t.test(`${order}: routing errors stay exact next to @fastify/cors's OPTIONS * route`, async (t) => {
    const app = await buildEcosystemApp(order)
    t.teardown(() => app.close())
    const miss = await app.inject({ url: '/nope', headers: json })
    t.equal(miss.statusCode, 404, 'a miss is not a 405 because of the preflight catch-all')
    t.equal(miss.json().detail, 'Not Found')
    const debugApp = await buildEcosystemApp(order, { debug: true, profiler: false })
    t.teardown(() => debugApp.close())
    t.equal((await debugApp.inject({ url: '/nope', headers: json })).json().detail, 'No route found for "GET http://example.test/nope"')
    const slash = await app.inject({ url: '/blog', headers: json })
    t.equal(slash.statusCode, 301)
    t.equal(slash.headers.location, 'http://example.test/blog/')
    const put = await app.inject({ method: 'PUT', url: '/items', headers: json })
    t.equal(put.statusCode, 405)
    t.equal(put.headers.allow, 'GET, POST', 'OPTIONS of the catch-all is not listed')
    const debugPut = await debugApp.inject({ method: 'PUT', url: '/items', headers: json })
    t.equal(debugPut.json().detail, 'No route found for "PUT http://example.test/items": Method Not Allowed (Allow: GET, POST)')
    // a real OPTIONS route of the app is a resource: it is listed
    const del = await app.inject({ method: 'DELETE', url: '/api/users/7', headers: json })
    t.equal(del.statusCode, 405)
    t.equal(del.headers.allow, 'GET, OPTIONS')
  })

  t.test(`${order}: other plugins' hooks run for the kernel's 404, 405 and 301`, async (t) => {
    const app = await buildEcosystemApp(order)
    t.teardown(() => app.close())
    for (const [method, url, status] of [['GET', '/nope', 404], ['PUT', '/items', 405], ['GET', '/blog', 301]] as const) {
      const res = await app.inject({ method, url, headers: { host, origin: 'https://front.test' } })
      t.equal(res.statusCode, status, `${method} ${url}`)
      t.equal(res.headers['x-content-type-options'], 'nosniff', `${method} ${url}: helmet's header`)
      t.match(res.headers['content-security-policy'], /default-src 'self'/, `${method} ${url}: helmet's CSP`)
      t.equal(res.headers['access-control-allow-origin'], 'https://front.test', `${method} ${url}: cors's header`)
      // as for Fastify's own 404: @fastify/rate-limit attaches itself to routes, not to the not-found handler
      t.equal(res.headers['x-ratelimit-limit'], undefined, `${method} ${url}: rate-limit as on Fastify's own 404`)
      t.equal(res.headers['x-app-hook'], 'ran', `${method} ${url}: the app's own onRequest hook`)
    }
    const page = await app.inject({ url: '/nope', headers: { host, origin: 'https://front.test', accept: 'text/html' } })
    const varyTokens = String(page.headers.vary).split(',').map((v) => v.trim().toLowerCase())
    t.ok(varyTokens.includes('origin') && varyTokens.includes('accept'), `Vary keeps Origin and adds Accept: ${String(page.headers.vary)}`)
  })

  t.test(`${order}: a CORS preflight, validation and bodies of misses`, async (t) => {
    const app = await buildEcosystemApp(order)
    t.teardown(() => app.close())
    const preflight = await app.inject({ method: 'OPTIONS', url: '/items', headers: { host, origin: 'https://front.test', 'access-control-request-method': 'POST' } })
    t.equal(preflight.statusCode, 204)
    t.equal(preflight.headers['access-control-allow-origin'], 'https://front.test')
    const invalid = await app.inject({ method: 'POST', url: '/items', headers: json, payload: { nope: 1 } })
    t.equal(invalid.statusCode, 400, 'schema validation still answers 400')
    // a route registered before the kernel answers its errors through the kernel too
    t.same(invalid.json(), { type: 'https://tools.ietf.org/html/rfc2616#section-10', title: 'An error occurred', status: 400, detail: 'Bad Request', code: 'FST_ERR_VALIDATION' })
    // a miss never reads its body: a malformed or unsupported one is still the routing 404
    const badJson = await app.inject({ method: 'POST', url: '/nope', headers: { ...json, 'content-type': 'application/json' }, payload: '{"broken' })
    t.equal(badJson.statusCode, 404)
    const xml = await app.inject({ method: 'POST', url: '/nope', headers: { ...json, 'content-type': 'application/xml' }, payload: '<a/>' })
    t.equal(xml.statusCode, 404)
    const wrongMethodWithBody = await app.inject({ method: 'PUT', url: '/items', headers: { ...json, 'content-type': 'application/json' }, payload: '{"broken' })
    t.equal(wrongMethodWithBody.statusCode, 405)
  })

  t.test(`${order}: a kernel.request answer also comes after every onRequest hook`, async (t) => {
    // added before the app is ready: production gives kernel.request its hook with its first listener beside the router's
    const app = await buildEcosystemApp(order, { debug: false }, (app) => {
      app.kernel.on(Stage.REQUEST, (event) => {
        if (event.request.headers['x-maintenance'] !== undefined) {
          event.setResponse({ statusCode: 503, headers: { 'Retry-After': '60', Vary: 'X-Maintenance' }, contentType: 'text/plain; charset=utf-8', body: 'Back soon' })
        }
      }, { priority: Priority.ROUTER + 1, name: 'maintenance' })
    })
    t.teardown(() => app.close())
    const res = await app.inject({ url: '/items', headers: { host, origin: 'https://front.test', 'x-maintenance': '1' } })
    t.equal(res.statusCode, 503)
    t.equal(res.body, 'Back soon')
    t.equal(res.headers['x-content-type-options'], 'nosniff')
    t.equal(res.headers['access-control-allow-origin'], 'https://front.test')
    t.match(String(res.headers.vary), /Origin/)
    t.match(String(res.headers.vary), /X-Maintenance/)
  })
}

t.test('routes registered before the kernel: served, named, and answered exactly', async (t) => {
  const app = Fastify(kernelServerOptions())
  t.teardown(() => app.close())
  app.get('/early/:id', { config: { name: 'early' } }, async function earlyController (request) { return { attributes: request.kernel?.attributes } })
  app.post('/early/:id', async () => 'posted early')
  await app.register(async (child) => { child.get('/docs/', async () => 'docs') }, { prefix: '/before' })
  await app.register(kernel, { debug: true, profiler: false })
  app.get('/late', async () => 'late')
  await app.ready()

  const ok = await app.inject({ url: '/early/7', headers: json })
  t.equal(ok.statusCode, 200)
  t.same(ok.json().attributes, { _route: 'early', _controller: 'earlyController', _route_params: { id: '7' } })
  const put = await app.inject({ method: 'PUT', url: '/early/7', headers: json })
  t.equal(put.statusCode, 405)
  t.equal(put.headers.allow, 'GET, POST')
  t.equal(put.json().detail, 'No route found for "PUT http://example.test/early/7": Method Not Allowed (Allow: GET, POST)')
  const slash = await app.inject({ url: '/before/docs', headers: json })
  t.equal(slash.statusCode, 301)
  t.equal(slash.headers.location, 'http://example.test/before/docs/')
  const miss = await app.inject({ url: '/earlier', headers: json })
  t.equal(miss.statusCode, 404)
  t.equal(miss.json().detail, 'No route found for "GET http://example.test/earlier"')
  t.ok(app.kernel.routes.routes.some((route) => route.name === 'early'), 'the route table learnt the early route')
  t.equal(app.kernel.routes.routes[0].name, 'early', 'a route registered before the kernel sorts first')
})

t.test("rate limits on misses: rate-limit's own recipe with the kernel's answer", async (t) => {
  const app = Fastify(kernelServerOptions())
  t.teardown(() => app.close())
  await app.register(kernel, { debug: false, notFoundHandler: false })
  await app.register(rateLimit, { max: 2, timeWindow: '1 minute' })
  app.setNotFoundHandler({ preHandler: app.rateLimit() }, (request, reply) => app.kernel.notFound(request, reply))
  app.get('/x', async () => 'x')
  await app.ready()
  const first = await app.inject({ url: '/nope', headers: json })
  t.equal(first.statusCode, 404)
  t.equal(first.headers['x-ratelimit-limit'], '2')
  t.equal(first.json().detail, 'Not Found')
  await app.inject({ url: '/nope', headers: json })
  const limited = await app.inject({ url: '/nope', headers: json })
  t.equal(limited.statusCode, 429, 'the third miss is rate limited')
})

t.test('config.catchAll: an SPA-style catch-all never turns a miss into a 405', async (t) => {
  const app = Fastify(kernelServerOptions())
  t.teardown(() => app.close())
  await app.register(kernel, { debug: false })
  app.post('/*', { config: { catchAll: true } }, async () => 'catch-all')
  app.get('/page', async () => 'page')
  await app.ready()
  const get = await app.inject({ url: '/nope', headers: json })
  t.equal(get.statusCode, 404)
  const del = await app.inject({ method: 'DELETE', url: '/page', headers: json })
  t.equal(del.headers.allow, 'GET')
})

t.test("an app's own error handler hands errors back with app.kernel.handleException", async (t) => {
  const app = Fastify(kernelServerOptions())
  t.teardown(() => app.close())
  await app.register(kernel, { debug: false })
  const seen: string[] = []
  app.kernel.on(Stage.EXCEPTION, (event) => { seen.push((event.error as Error).message) }, { name: 'spy' })
  await app.register(async (api) => {
    api.setErrorHandler(async (error, request, reply) => {
      if ((error as { statusCode?: number }).statusCode === 418) return reply.code(418).send({ teapot: true })
      return app.kernel.handleException(error, request, reply)
    })
    api.get('/teapot', async () => { throw Object.assign(new Error('short and stout'), { statusCode: 418 }) })
    api.get('/fail', async () => { throw new Error('database down') })
  }, { prefix: '/api' })
  await app.ready()
  t.same((await app.inject({ url: '/api/teapot', headers: json })).json(), { teapot: true })
  const failed = await app.inject({ url: '/api/fail', headers: { host, accept: 'text/html' } })
  t.equal(failed.statusCode, 500)
  t.match(failed.body, 'Oops! An Error Occurred')
  t.equal(failed.headers.vary, 'Accept')
  t.same(seen, ['database down'], 'kernel.exception ran for the delegated error only')
})
