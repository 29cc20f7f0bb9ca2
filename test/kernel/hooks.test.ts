/**
 * Production pays only for what listens: with nothing but the router on kernel.request (the
 * production default), the kernel adds no onRequest or preHandler hook of its own, each route
 * gets one light route hook (the router's checks of a match), and every answer is the one the
 * kernel gives with kernel.request hooked: compared byte for byte with an app whose extra
 * kernel.request listener gives the stage its hook.
 */
import t from 'tap'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { createKernelApp, Priority, Stage } from '../../index.js'
import type { KernelOptions } from '../../index.js'

const HOST = 'example.test'

/** A production app; `listening`: with a kernel.request listener of the app's (the stage then has its hook). */
async function productionApp (listening: boolean, kernel: KernelOptions = {}, before?: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const app = await createKernelApp({ kernel: { debug: false, ...kernel } })
  before?.(app)
  if (listening) app.kernel.on(Stage.REQUEST, function appListener () {})
  app.get('/hello/:name', { config: { name: 'hello' } }, async function hello (request) {
    const { attributes } = request.kernel
    return { name: (request.params as { name: string }).name, route: attributes._route, controller: attributes._controller, params: attributes._route_params }
  })
  app.get('/blog/', { config: { name: 'blog' } }, async () => 'blog')
  app.route({ method: ['GET', 'POST'], url: '/form', handler: async () => 'form' })
  app.get('/items/:id(^\\d+$)', async (request) => ({ id: (request.params as { id: string }).id }))
  app.get('/gone', async (_request, reply) => reply.callNotFound())
  app.get('/read-then-gone', async (request, reply) => { request.kernel.set('cspNonces', { script: 'a', style: 'b' }); return reply.callNotFound() })
  app.get('/boom', async function boom () { throw new Error('kaboom') })
  app.get('/json-boom', { config: { format: 'json' } }, async () => { throw Object.assign(new Error('teapot'), { statusCode: 418 }) })
  await app.ready()
  return app
}

const REQUESTS: Array<InjectOptions & { name: string }> = [
  { name: 'matched', url: '/hello/world' },
  { name: 'matched, HEAD', method: 'HEAD', url: '/hello/world' },
  { name: 'matched with a query', url: '/hello/w%C3%B6rld?x=1' },
  { name: 'empty parameter: 404', url: '/hello/' },
  { name: 'requirement refuses', url: '/items/abc' },
  { name: 'requirement matches', url: '/items/12' },
  { name: 'trailing-slash redirect', url: '/blog' },
  { name: 'trailing-slash redirect of a query', url: '/blog?page=2' },
  { name: 'miss', url: '/nope' },
  { name: 'miss with a referer', url: '/nope', headers: { referer: 'http://from.test/' } },
  { name: 'miss, JSON', url: '/nope', headers: { accept: 'application/json' } },
  { name: 'wrong method: 405', method: 'DELETE', url: '/form' },
  { name: 'wrong method, JSON', method: 'DELETE', url: '/hello/world', headers: { accept: 'application/json' } },
  { name: 'a body to a miss is never read (no 415, no 400)', method: 'POST', url: '/nope', payload: '{not json', headers: { 'content-type': 'application/json' } },
  { name: 'a body of an unknown type to a miss', method: 'POST', url: '/nope', payload: 'x', headers: { 'content-type': 'application/x-unknown' } },
  { name: 'invalid Host on a match', url: '/hello/world', headers: { host: 'bad host!' } },
  { name: 'invalid Host on a miss', url: '/nope', headers: { host: 'bad host!' } },
  { name: 'invalid Host, JSON', url: '/hello/world', headers: { host: 'bad host!', accept: 'application/json' } },
  { name: 'reply.callNotFound() in a handler', url: '/gone' },
  { name: 'reply.callNotFound() after reading request.kernel', url: '/read-then-gone' },
  { name: 'a controller error', url: '/boom' },
  { name: 'a status error on a JSON route', url: '/json-boom' },
  { name: 'a bad body on a match', method: 'POST', url: '/form', payload: '{not json', headers: { 'content-type': 'application/json' } }
]

/** What a client sees of an answer, the date apart. */
async function answer (app: FastifyInstance, request: InjectOptions): Promise<{ status: number, headers: Record<string, unknown>, body: string }> {
  const res = await app.inject({ ...request, headers: { host: HOST, accept: 'text/html', ...request.headers } })
  const { date: _date, ...headers } = res.headers
  return { status: res.statusCode, headers, body: res.body }
}

t.test('production adds no onRequest or preHandler hook: one route hook, the error hook, nothing else', async (t) => {
  const app = await productionApp(false)
  t.teardown(() => app.close())
  const routes = app.printRoutes({ includeHooks: true, commonPrefix: false })
  const hello = routes.slice(routes.indexOf('/hello/:name (GET)'), routes.indexOf('/hello/:name (HEAD)'))
  t.match(hello, '(onRequest) ["kernelRoutedRequest()"]', 'the route\'s own hook: the router\'s checks')
  t.match(hello, '(onError) ["kernelRecordError()"]', 'the error hook (it runs only for errors)')
  for (const hook of ['preParsing', 'preValidation', 'preHandler', 'preSerialization', 'onSend', 'onResponse', 'onRequestAbort']) {
    t.notMatch(hello, `(${hook})`, `no ${hook} hook`)
  }
  t.same(app.kernel.listeners(Stage.REQUEST).map(({ name }) => name), ['router'])

  const hooked = await productionApp(true)
  t.teardown(() => hooked.close())
  const listed = hooked.printRoutes({ includeHooks: true, commonPrefix: false })
  t.match(listed, '(onRequest) ["kernelRequest()","kernelRequestAnswer()"]', 'with a listener of its own, kernel.request gets its hook')
  t.match(listed, '(preHandler) ["kernelController()"]')
})

t.test('every answer is the one kernel.request gives when it runs on its hook', async (t) => {
  const elided = await productionApp(false)
  const hooked = await productionApp(true)
  t.teardown(() => Promise.all([elided.close(), hooked.close()]))
  for (const request of REQUESTS) {
    const [got, expected] = [await answer(elided, request), await answer(hooked, request)]
    t.same(got, expected, request.name)
  }
  // and they are the kernel's answers, not Fastify's
  t.equal((await answer(elided, { url: '/hello/' })).status, 404)
  t.equal((await answer(elided, { url: '/blog' })).headers.location, `http://${HOST}/blog/`)
  t.equal((await answer(elided, { url: '/hello/world', headers: { host: 'bad host!' } })).status, 400)
  t.equal((await answer(elided, { method: 'POST', url: '/nope', payload: '{not json', headers: { 'content-type': 'application/json' } })).status, 404)
  t.match((await answer(elided, { method: 'DELETE', url: '/form' })).headers.allow, /GET.*POST/)
  t.same(JSON.parse((await answer(elided, { url: '/hello/world' })).body), { name: 'world', route: 'hello', controller: 'hello', params: { name: 'world' } }, 'request.kernel has the match\'s attributes when first read')
})

t.test('kernel.exception, kernel.response and kernel.terminate run with kernel.request left without a hook', async (t) => {
  const seen: string[] = []
  const app = await productionApp(false, {}, (app) => {
    app.kernel.on(Stage.EXCEPTION, (event) => { seen.push(`exception ${String(event.context.attributes._route)} ${(event.error as Error).message}`) }, { priority: 10 })
    app.kernel.on(Stage.RESPONSE, (event) => { event.reply.header('x-route', String(event.context.attributes._route)) })
    app.kernel.on(Stage.TERMINATE, (event) => { seen.push(`terminate ${event.request.url}`) })
  })
  t.teardown(() => app.close())
  t.notMatch(app.printRoutes({ includeHooks: true }), 'kernelRequest()', 'kernel.request still has no hook')
  const ok = await app.inject({ url: '/hello/world', headers: { host: HOST } })
  t.equal(ok.headers['x-route'], 'hello', 'kernel.response sees the match')
  const boom = await app.inject({ url: '/boom', headers: { host: HOST } })
  t.equal(boom.statusCode, 500)
  t.equal(boom.headers['x-route'], 'get_boom')
  await new Promise((resolve) => setImmediate(resolve))
  t.same(seen, ['terminate /hello/world', 'exception get_boom kaboom', 'terminate /boom'])
})

t.test('kernel.request keeps its hook where its work needs one', async (t) => {
  const trusted = await productionApp(false, { trustedHosts: ['^example\\.test$'] })
  t.teardown(() => trusted.close())
  t.match(trusted.printRoutes({ includeHooks: true }), 'kernelRequest()', 'trusted hosts: the router checks the Host of every request')
  t.equal((await trusted.inject({ url: '/hello/world', headers: { host: 'other.test' } })).statusCode, 400)

  // a route added before the kernel gets none of its route hooks: kernel.request keeps its own
  const app = (await import('fastify')).default()
  app.get('/early', async (request) => ({ route: request.kernel.attributes._route }))
  await app.register((await import('../../index.js')).kernel, { debug: false })
  app.get('/late', async () => 'late')
  await app.ready()
  t.teardown(() => app.close())
  t.match(app.printRoutes({ includeHooks: true }), 'kernelRequest()')
  t.same((await app.inject({ url: '/early', headers: { host: HOST } })).json(), { route: 'get_early' })
})

t.test('a first kernel.request listener added after an encapsulated plugin\'s routes still runs for them', async (t) => {
  const seen: string[] = []
  const app = await createKernelApp({ kernel: { debug: false } })
  t.teardown(() => app.close())
  await app.register(async (child) => {
    child.get('/child', async (request) => ({ route: request.kernel.attributes._route }))
  }, { prefix: '/api' })
  // the plugin's scope was made before kernel.request had its onRequest hook
  // before the router's: it runs for a miss too (the router's miss ends the stage)
  app.kernel.on(Stage.REQUEST, (event) => { seen.push(event.request.url) }, { priority: Priority.ROUTER + 1 })
  app.get('/root', async () => 'root')
  await app.ready()
  t.same((await app.inject({ url: '/api/child', headers: { host: HOST } })).json(), { route: 'get_api_child' })
  await app.inject({ url: '/root', headers: { host: HOST } })
  await app.inject({ url: '/api/nope', headers: { host: HOST } })
  t.same(seen, ['/api/child', '/root', '/api/nope'], 'kernel.request ran once for each, the route in the plugin included')
})
