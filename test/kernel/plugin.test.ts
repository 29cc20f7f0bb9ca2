import t from 'tap'
import Fastify from 'fastify'
import view from '@fastify/view'
import Handlebars from 'handlebars'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import kernel, { kernelServerOptions } from '../../index.js'

const headers = { host: 'example.test', accept: 'application/json' }

t.test('inside a parent app: routes under prefixes and in encapsulated children', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(kernel, { debug: true })
  await app.register(async (child) => {
    child.get('/users/:id', { config: { name: 'user' } }, async () => 'user')
    child.post('/users', async () => 'created')
    await child.register(async (grandchild) => {
      grandchild.get('/deep', async () => 'deep')
    }, { prefix: '/nested' })
  }, { prefix: '/api/v1' })
  await app.ready()

  t.equal((await app.inject({ url: '/api/v1/users/7', headers })).statusCode, 200)
  t.equal((await app.inject({ url: '/api/v1/nested/deep', headers })).body, 'deep')
  const notFound = await app.inject({ url: '/api/v1/nope', headers })
  t.equal(notFound.statusCode, 404)
  t.equal(notFound.json().detail, 'No route found for "GET http://example.test/api/v1/nope"')
  const notAllowed = await app.inject({ method: 'DELETE', url: '/api/v1/users', headers })
  t.equal(notAllowed.statusCode, 405)
  t.equal(notAllowed.headers.allow, 'POST')
  const redirect = await app.inject({ url: '/api/v1/nested/deep/', headers })
  t.equal(redirect.statusCode, 301)
  t.equal(redirect.headers.location, 'http://example.test/api/v1/nested/deep')
})

t.test('a child with its own error handler keeps it; others get the kernel\'s', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(kernel, { debug: false })
  await app.register(async (child) => {
    child.setErrorHandler(async (error, _request, reply) => reply.code(418).send({ mine: (error as Error).message }))
    child.get('/fail', async () => { throw new Error('child failure') })
  }, { prefix: '/own' })
  app.get('/fail', async () => { throw new Error('root failure') })
  await app.ready()
  const own = await app.inject({ url: '/own/fail', headers })
  t.equal(own.statusCode, 418)
  t.same(own.json(), { mine: 'child failure' })
  const root = await app.inject({ url: '/fail', headers })
  t.equal(root.statusCode, 500)
  t.equal(root.json().detail, 'Internal Server Error')
})

t.test('options are validated: unknown or wrongly typed options fail register', async (t) => {
  const unknown = Fastify()
  t.teardown(() => unknown.close())
  await t.rejects(async () => { await unknown.register(kernel, { debgu: true } as never).ready() }, { code: 'KERNEL_INVALID_OPTIONS', message: /unknown option "debgu"/ })
  const wrongType = Fastify()
  t.teardown(() => wrongType.close())
  await t.rejects(async () => { await wrongType.register(kernel, { debug: 'yes' } as never).ready() }, { message: /option "debug" must be boolean/ })
  for (const [clock, message] of [[5, /option "clock" must be object/], [{ now: () => 0 }, /option "clock" must have now\(\) and monotonic\(\) functions/]] as const) {
    const wrongClock = Fastify()
    t.teardown(() => wrongClock.close())
    await t.rejects(async () => { await wrongClock.register(kernel, { clock } as never).ready() }, { code: 'KERNEL_INVALID_OPTIONS', message }, String(message))
  }
})

t.test('an app with its own not-found handler: notFoundHandler false and kernel.notFound()', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(kernel, { debug: true, notFoundHandler: false })
  app.get('/x', async () => 'x')
  app.post('/y', async () => 'y')
  app.setNotFoundHandler(async (request, reply) => {
    if (request.url.startsWith('/spa/')) return reply.type('text/html').send('<app-shell>')
    return app.kernel.notFound(request, reply)
  })
  await app.ready()
  t.equal((await app.inject({ url: '/spa/page', headers })).body, '<app-shell>')
  const miss = await app.inject({ url: '/missing', headers })
  t.equal(miss.statusCode, 404)
  t.equal(miss.json().detail, 'No route found for "GET http://example.test/missing"')
  const wrongMethod = await app.inject({ url: '/y', headers })
  t.equal(wrongMethod.statusCode, 405)
  t.equal(wrongMethod.headers.allow, 'POST')
  const slash = await app.inject({ url: '/x/', headers })
  t.equal(slash.statusCode, 301)
})

t.test('a prefix with its own not-found handler keeps it, the rest gets the kernel\'s', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(kernel, { debug: true })
  await app.register(async (child) => {
    child.get('/a', async () => 'a')
    child.setNotFoundHandler(async (_request, reply) => reply.code(404).send({ docs: 'not here' }))
  }, { prefix: '/docs' })
  await app.ready()
  t.same((await app.inject({ url: '/docs/zzz', headers })).json(), { docs: 'not here' })
  t.equal((await app.inject({ url: '/zzz', headers })).json().detail, 'No route found for "GET http://example.test/zzz"')
})

t.test("an app's own @fastify/view does not clash with the kernel's", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kernel-view-'))
  writeFileSync(join(dir, 'page.hbs'), '<p>{{who}} {{site}}</p>')
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(kernel, { debug: false })
  await app.register(view, { engine: { handlebars: Handlebars }, root: dir })
  // reply.locals belongs to the app's own view plugin: the kernel's keeps its hook to itself
  app.addHook('preHandler', (_request, reply, done) => { (reply as unknown as { locals: Record<string, unknown> }).locals.site = 'locals'; done() })
  app.get('/page', async (_request, reply) => reply.view('page.hbs', { who: 'app' }))
  await app.ready()
  t.equal((await app.inject({ url: '/page', headers })).body, '<p>app locals</p>')
  const miss = await app.inject({ url: '/nope', headers: { host: 'example.test' } })
  t.match(miss.body, 'Oops! An Error Occurred')
})

t.test('without kernelServerOptions a bad URL still gets a 4xx; with them the kernel 404', async (t) => {
  const plain = Fastify()
  t.teardown(() => plain.close())
  await plain.register(kernel, { debug: false })
  await plain.ready()
  const res = await plain.inject({ url: '/bad%zz', headers })
  t.equal(res.statusCode, 400, "Fastify's own answer")

  const configured = Fastify(kernelServerOptions())
  t.teardown(() => configured.close())
  await configured.register(kernel, { debug: true })
  await configured.ready()
  const kernel404 = await configured.inject({ url: '/bad%zz', headers })
  t.equal(kernel404.statusCode, 404)
  t.equal(kernel404.json().detail, 'No route found for "GET http://example.test/bad%zz"')
  t.equal(kernel404.headers['x-robots-tag'], 'noindex', 'kernel.response ran for the rejected request')
})
