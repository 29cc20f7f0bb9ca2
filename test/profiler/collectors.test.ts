import t from 'tap'
import { Writable } from 'node:stream'
import { buildApp } from '../helpers.js'
import { host, profiled } from './helpers.js'
import { Stage } from '../../index.js'

t.test('request collector: method, URL, route and params, query, headers, cookies, body, IP', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const { profile } = await profiled(app, {
    method: 'POST',
    url: '/form?page=2&api_key=abc',
    headers: { 'content-type': 'application/json', cookie: 'theme=dark; PHPSESSID=s3ss10n', 'x-custom': 'hello' },
    payload: { name: 'Ada', password: 'hunter2', nested: { token: 'zzz', ok: 1 } },
    remoteAddress: '10.1.2.3'
  })
  const r = profile.collected.request!
  t.equal(r.method, 'POST')
  t.equal(r.url, 'http://example.test/form?page=2&api_key=******', 'secret query values are masked in the URL too')
  t.equal(r.path, '/form')
  t.equal(r.route, 'form')
  t.equal(r.ip, '10.1.2.3')
  t.same(r.query, { page: '2', api_key: '******' }, 'query field named *key* is masked')
  t.same(r.headers.find(([n]) => n === 'x-custom'), ['x-custom', 'hello'])
  t.same(r.headers.find(([n]) => n === 'cookie'), ['cookie', '******'])
  t.same(r.cookies, [['theme', 'dark'], ['PHPSESSID', '******']])
  t.equal(r.body?.contentType, 'application/json')
  t.same(r.body?.content, { name: 'Ada', password: '******', nested: { token: '******', ok: 1 } })
  t.same(r.attributes.find(([n]) => n === '_route'), ['_route', 'form'])
  t.equal(profile.method, 'POST')
  t.equal(profile.statusCode, 200)
})

t.test('response collector: status, headers, content type, size; collection does not change the response', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/cookie', async (_request, reply) => reply.header('set-cookie', 'sid=secret-value').header('x-app', 'yes').send({ a: 1 }))
  })
  t.teardown(() => app.close())
  const { res, profile } = await profiled(app, { url: '/cookie' })
  t.same(res.json(), { a: 1 })
  const response = profile.collected.request!.response!
  t.equal(response.statusCode, 200)
  t.equal(response.statusText, 'OK')
  t.match(response.contentType, /^application\/json/)
  t.equal(response.size, Buffer.byteLength(res.body))
  t.same(response.headers.find(([n]) => n === 'set-cookie'), ['set-cookie', '******'])
  t.same(response.headers.find(([n]) => n === 'x-app'), ['x-app', 'yes'])
  t.same(response.headers.find(([n]) => n === 'x-debug-token'), ['x-debug-token', profile.token], 'the token is not a secret')

  // the same request without the profiler answers the same body and status
  const plain = await buildApp({ debug: true, profiler: false }, {}, (app) => {
    app.get('/cookie', async (_request, reply) => reply.header('set-cookie', 'sid=secret-value').header('x-app', 'yes').send({ a: 1 }))
  })
  t.teardown(() => plain.close())
  const bare = await plain.inject({ url: '/cookie', headers: { host } })
  t.equal(bare.body, res.body)
  t.equal(bare.statusCode, res.statusCode)
  t.equal(bare.headers['set-cookie'], res.headers['set-cookie'])
})

t.test('routing collector: the matched route with its parameters', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const { profile } = await profiled(app, { url: '/hello/J%C3%BCrgen' })
  t.equal(profile.collected.routing!.outcome, 'matched')
  t.same(profile.collected.routing!.route, { name: 'hello', url: '/hello/:name', methods: ['GET'], controller: 'hello', params: { name: 'Jürgen' } })
  t.equal(profile.collected.routing!.trace, null, 'a match stores no trace')
})

t.test('routing collector: a 404 explains why each route did not match', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const { profile } = await profiled(app, { url: '/items/abc' })
  t.equal(profile.collected.routing!.outcome, 'not-found')
  t.equal(profile.collected.routing!.attemptedPath, '/items/abc/')
  const trace = profile.collected.routing!.trace!
  const byName = (name: string) => trace.find((line) => line.name === name)!
  t.same(byName('get_items_id').verdict, 'requirement')
  t.equal(byName('get_items_id').reason, 'requirement "id" failed: "abc" does not match ^\\d+$')
  t.equal(byName('get_items_id').path, '/items/{id}')
  t.equal(byName('hello').verdict, 'path')
  t.equal(byName('hello').reason, 'segment 1 is "items", the route expects "hello"')
  t.equal(trace.length, app.kernel.routes.routes.length, 'every route of the table is traced')
})

t.test('routing collector: method, trailing slash and redirect', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const notAllowed = await profiled(app, { method: 'DELETE', url: '/form' })
  t.equal(notAllowed.profile.collected.routing!.outcome, 'method-not-allowed')
  t.same(notAllowed.profile.collected.routing!.allow, ['GET', 'POST', 'PUT'])
  const form = notAllowed.profile.collected.routing!.trace!.find((line) => line.name === 'form')!
  t.equal(form.verdict, 'method')
  t.equal(form.reason, 'method DELETE is not in GET, POST')

  const redirect = await profiled(app, { url: '/blog' })
  t.equal(redirect.res.statusCode, 301)
  t.equal(redirect.profile.collected.routing!.outcome, 'redirect')
  t.equal(redirect.profile.collected.routing!.redirect, '/blog/')
  const blog = redirect.profile.collected.routing!.trace!.find((line) => line.name === 'blog')!
  t.equal(blog.verdict, 'slash')
  t.match(blog.reason, /^trailing slash: the route is \/blog\//)

  const wrongMethodSlash = await profiled(app, { method: 'POST', url: '/blog' })
  t.equal(wrongMethodSlash.res.statusCode, 404)
  t.equal(wrongMethodSlash.profile.collected.routing!.trace!.find((line) => line.name === 'blog')!.verdict, 'slash')
})

t.test('routing collector: an empty parameter, %2F and several trailing slashes by the matcher\'s rules', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const empty = await profiled(app, { url: '/hello/' })
  t.equal(empty.res.statusCode, 404)
  t.equal(empty.profile.collected.routing!.outcome, 'not-found')
  t.equal(empty.profile.collected.routing!.attemptedPath, '/hello')
  const hello = empty.profile.collected.routing!.trace!.find((line) => line.name === 'hello')!
  t.equal(hello.verdict, 'requirement')
  t.equal(hello.reason, 'parameter "name" is empty: a parameter matches one or more characters')
  const bare = await profiled(app, { url: '/hello' })
  t.equal(bare.profile.collected.routing!.attemptedPath, '/hello/')
  t.equal(bare.profile.collected.routing!.trace!.find((line) => line.name === 'hello')!.verdict, 'path', 'the other slash does not match either')

  const encoded = await profiled(app, { method: 'PUT', url: '/hello/a%2Fb' })
  t.equal(encoded.profile.collected.routing!.trace!.find((line) => line.name === 'hello')!.verdict, 'path', '%2F is a segment separator')
  const slashes = await profiled(app, { method: 'PUT', url: '/blog//' })
  t.equal(slashes.res.statusCode, 405)
  t.equal(slashes.profile.collected.routing!.trace!.find((line) => line.name === 'blog')!.verdict, 'method')
})

t.test('exception collector: the whole chain with classes, messages, traces and the cause', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const miss = await profiled(app, { url: '/robots.txt' })
  t.same(miss.profile.collected.exception!.map((e) => [e.class, e.message]), [
    ['fastify-kernel/NotFoundHttpException', 'No route found for "GET http://example.test/robots.txt"'],
    ['fastify-kernel/ResourceNotFoundException', 'No routes found for "/robots.txt/".']
  ])
  t.ok(miss.profile.collected.exception![0].trace.length > 0, 'with its stack trace')
  t.equal(miss.profile.statusCode, 404)

  const boom = await profiled(app, { url: '/boom' })
  t.same(boom.profile.collected.exception!.map((e) => [e.class, e.message, e.statusCode]), [['Error', 'kaboom', 500], ['TypeError', 'inner failure', 500]])
  t.ok(boom.profile.collected.exception![0].trace.some((frame) => frame.function.includes('boom')), 'the controller is in the trace')

  const ok = await profiled(app, { url: '/about' })
  t.same(ok.profile.collected.exception, [], 'no exception: an empty chain')
})

t.test('events collector: each stage and listener in order, with start and duration', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const { profile } = await profiled(app, { url: '/robots.txt' })
  const stages = profile.collected.events!.entries.filter((e) => e.listener === undefined).map((e) => e.stage)
  t.same(stages, ['kernel.request', 'kernel.exception', 'kernel.response', 'kernel.finish_request', 'kernel.terminate'])
  const listeners = profile.collected.events!.entries.filter((e) => e.listener !== undefined).map((e) => `${e.stage}:${e.listener}`)
  t.same(listeners.slice(0, 2), ['kernel.request:profiler token', 'kernel.request:router'])
  t.ok(listeners.includes('kernel.response:profiler'))
  t.equal(listeners.at(-1), 'kernel.terminate:profile save')
  for (let i = 1; i < profile.collected.events!.entries.length; i++) {
    t.ok(profile.collected.events!.entries[i].start >= profile.collected.events!.entries[i - 1].start, 'entries are in start order')
  }
  t.ok(profile.collected.events!.entries.every((e) => e.duration >= 0))
})

t.test('logs collector: the request\'s pino records with level; the app\'s log output is unchanged', async (t) => {
  const route = (app: import('fastify').FastifyInstance) => {
    app.get('/logged', async (request) => {
      request.log.debug('a debug detail')
      request.log.info({ orderId: 42, apiKey: 'k-123' }, 'order %s placed', 'A-1')
      request.log.child({ part: 'child' }).warn('from a child logger')
      request.log.error(new Error('something failed'))
      return 'logged'
    })
  }
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _enc, done) { lines.push(String(chunk)); done() } })
  const app = await buildApp({ debug: true }, { logger: { level: 'info', stream } }, route)
  t.teardown(() => app.close())
  const { profile } = await profiled(app, { url: '/logged' })
  const records = profile.collected.logs!.map((r) => [r.levelName, r.message])
  t.same(records.filter(([, m]) => !/request|completed/.test(m)), [
    ['debug', 'a debug detail'],
    ['info', 'order A-1 placed'],
    ['warn', 'from a child logger'],
    ['error', 'something failed']
  ])
  t.ok(records.some(([level, m]) => level === 'info' && m === 'incoming request'), "Fastify's own request log is captured")
  const order = profile.collected.logs!.find((r) => r.message === 'order A-1 placed')!
  t.same(order.context, { orderId: 42, apiKey: '******' }, 'log fields are redacted too')
  t.equal(order.level, 30)

  const printed = lines.map((l) => JSON.parse(l) as { msg: string, level: number })
  t.notOk(printed.some((l) => l.msg === 'a debug detail'), 'the logger still filters by its own level')
  t.ok(printed.some((l) => l.msg === 'order A-1 placed' && l.level === 30))
  t.ok(printed.some((l) => l.msg === 'from a child logger'), 'children still print')
  const printedOrder = printed.find((l) => l.msg === 'order A-1 placed') as unknown as Record<string, unknown>
  t.equal(printedOrder.apiKey, 'k-123', 'the profiler masks its copy, not what the app prints')
  t.ok(typeof printedOrder.reqId === 'string', 'bindings of the request logger are kept')
})

t.test('time collector (the timeline, once the performance panel): total time, time to first byte, heap used', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const { profile } = await profiled(app, { url: '/about' })
  const p = profile.collected.time!
  t.ok(p.totalMs > 0)
  t.ok(p.timeToFirstByteMs !== null && p.timeToFirstByteMs > 0 && p.timeToFirstByteMs <= p.totalMs)
  t.ok(p.heapUsedStart > 0 && p.heapUsedEnd > 0)
  t.equal(profile.duration, p.totalMs)
  t.equal(p.totalMs, Math.round(p.totalMs * 1000) / 1000, 'to the microsecond')
})

t.test('a request listener that answers early: routing "none", still profiled', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.kernel.on(Stage.REQUEST, (event) => {
      if (event.request.headers['x-maintenance'] !== undefined) event.setResponse({ statusCode: 503, headers: {}, contentType: 'text/plain; charset=utf-8', body: 'later' })
    }, { priority: 64 })
  })
  t.teardown(() => app.close())
  const { res, profile } = await profiled(app, { url: '/about', headers: { 'x-maintenance': '1' } })
  t.equal(res.statusCode, 503)
  t.equal(profile.statusCode, 503)
  t.equal(profile.collected.routing!.outcome, 'none')
})
