import t from 'tap'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../helpers.js'
import { Stage, Priority } from '../../index.js'
import type { KernelContext, TraceEntry } from '../../index.js'

/** Runs a request and gives back the stage names of its trace, in order, and the listeners. */
async function traced (app: FastifyInstance, url: string, method = 'GET'): Promise<{ stages: string[], listeners: string[], trace: TraceEntry[], status: number }> {
  let context: KernelContext | null = null
  const done = new Promise<void>((resolve) => {
    app.kernel.on(Stage.TERMINATE, function capture (event) { context = event.context; resolve() }, { priority: -2000 })
  })
  const res = await app.inject({ method, url, headers: { host: 'example.test' } })
  await done
  const trace = (context as KernelContext | null)?.trace ?? []
  return {
    stages: trace.filter((e) => e.listener === undefined).map((e) => e.stage),
    listeners: trace.filter((e) => e.listener !== undefined).map((e) => `${e.stage}:${e.listener}`),
    trace,
    status: res.statusCode
  }
}

t.test('a matched route runs the five stages in order, then terminate', async (t) => {
  let handlerRan = false
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/traced', async () => { handlerRan = true; return 'ok' })
  })
  t.teardown(() => app.close())
  // listeners are allowed after ready: the trace helper adds one per request
  const { stages, status } = await traced(app, '/traced')
  t.equal(status, 200)
  t.ok(handlerRan)
  t.same(stages, ['kernel.request', 'kernel.controller', 'kernel.controller_arguments', 'kernel.response', 'kernel.finish_request', 'kernel.terminate'])
})

t.test('a routing error fails in kernel.request, goes through kernel.exception, and still passes kernel.response', async (t) => {
  const app = await buildApp({ debug: true })
  const ran: string[] = []
  app.kernel.on(Stage.REQUEST, function firewall () { ran.push('firewall') }, { priority: Priority.FIREWALL })
  t.teardown(() => app.close())
  const { stages, listeners, status, trace } = await traced(app, '/robots.txt')
  t.equal(status, 404)
  t.same(stages, ['kernel.request', 'kernel.exception', 'kernel.response', 'kernel.finish_request', 'kernel.terminate'])
  t.same(ran, [], 'request listeners after the router do not run')
  t.ok(listeners.includes('kernel.exception:error controller'))
  t.equal(listeners.filter((l) => l.startsWith('kernel.response:')).at(-1), 'kernel.response:disallow robots indexing', 'robots is the last response listener')
  t.equal(trace.find((e) => e.listener === 'router')?.outcome, 'threw')
})

t.test('a controller error: ... kernel.controller_arguments > kernel.exception > kernel.response ...', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const { stages, status } = await traced(app, '/boom')
  t.equal(status, 500)
  t.same(stages, ['kernel.request', 'kernel.controller', 'kernel.controller_arguments', 'kernel.exception', 'kernel.response', 'kernel.finish_request', 'kernel.terminate'])
})

t.test('listeners run by priority, higher first, stable for equal priorities', async (t) => {
  const app = await buildApp({ debug: true })
  const order: string[] = []
  app.kernel.on(Stage.REQUEST, () => { order.push('low') }, { priority: -10 })
  app.kernel.on(Stage.REQUEST, () => { order.push('high') }, { priority: 200 })
  app.kernel.on(Stage.REQUEST, () => { order.push('zero-a') })
  app.kernel.on(Stage.REQUEST, () => { order.push('zero-b') })
  app.kernel.on(Stage.REQUEST, function beforeRouter () { order.push('33') }, { priority: 33 })
  t.teardown(() => app.close())
  const { listeners } = await traced(app, '/about')
  t.same(order, ['high', '33', 'zero-a', 'zero-b', 'low'])
  const names = listeners.filter((l) => l.startsWith('kernel.request:'))
  t.equal(names.indexOf('kernel.request:beforeRouter') + 1, names.indexOf('kernel.request:router'), 'the router sits at priority 32')
})

t.test('a request listener can answer the request; later listeners and the controller do not run', async (t) => {
  let controllerRan = false
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/maintenance', async () => { controllerRan = true; return 'no' })
  })
  const later: string[] = []
  app.kernel.on(Stage.REQUEST, (event) => {
    if (event.request.url === '/maintenance') event.setResponse({ statusCode: 503, headers: { 'Retry-After': '60' }, contentType: 'text/plain; charset=utf-8', body: 'down' })
  }, { priority: 50 })
  app.kernel.on(Stage.REQUEST, () => { later.push('ran') }, { priority: 40 })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/maintenance', headers: { host: 'example.test' } })
  t.equal(res.statusCode, 503)
  t.equal(res.body, 'down')
  t.equal(res.headers['retry-after'], '60')
  t.equal(res.headers['x-robots-tag'], 'noindex', 'the early answer still passes kernel.response')
  t.notOk(controllerRan)
  t.same(later, [])
})

t.test('stopPropagation stops the stage; async listeners are awaited in order', async (t) => {
  const app = await buildApp({ debug: true })
  const order: string[] = []
  // resumes on a later turn of the event loop: only an awaiting dispatcher runs it before the stopper
  app.kernel.on(Stage.CONTROLLER, async () => { await nextTurn(); order.push('async first') }, { priority: 10 })
  app.kernel.on(Stage.CONTROLLER, (event) => { order.push('stopper'); event.stopPropagation() }, { priority: 5 })
  app.kernel.on(Stage.CONTROLLER, () => { order.push('never') }, { priority: 1 })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/about', headers: { host: 'example.test' } })
  t.equal(res.statusCode, 200)
  t.same(order, ['async first', 'stopper'])
})

t.test('a throwing listener becomes the error of the request', async (t) => {
  const app = await buildApp({ debug: true })
  app.kernel.on(Stage.CONTROLLER_ARGUMENTS, async (event) => {
    if ((event.arguments.params as { name?: string }).name === 'forbidden') throw new Error('arguments rejected')
  })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/hello/forbidden', headers: { host: 'example.test', accept: 'application/json' } })
  t.equal(res.statusCode, 500)
  t.equal(res.json().detail, 'arguments rejected')
  const ok = await app.inject({ url: '/hello/fine', headers: { host: 'example.test' } })
  t.equal(ok.statusCode, 200)
})

t.test('a response listener can replace the payload; a failing one does not break the response', async (t) => {
  const app = await buildApp({ debug: false }, {}, (app) => {
    app.kernel.on(Stage.RESPONSE, (event) => {
      if (event.request.url === '/about') event.payload = 'rewritten'
    })
    app.kernel.on(Stage.RESPONSE, (event) => {
      if (event.request.url === '/blog/') throw new Error('response listener broke')
    })
  })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/about', headers: { host: 'example.test' } })).body, 'rewritten')
  const res = await app.inject({ url: '/blog/', headers: { host: 'example.test' } })
  t.equal(res.statusCode, 200)
  t.equal(res.body, 'blog')
})

t.test('the trace records start and duration of each stage and listener', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const { trace } = await traced(app, '/hello/x')
  t.ok(trace.length >= 6)
  for (const entry of trace) {
    t.ok(entry.start >= 0 && entry.duration >= 0, `${entry.stage} ${entry.listener ?? ''}`)
  }
  const router = trace.find((e) => e.listener === 'router')
  t.equal(router?.priority, 32)
})

t.test('request attributes: route name, controller, params', async (t) => {
  const app = await buildApp({ debug: true })
  let attributes: Record<string, unknown> = {}
  app.kernel.on(Stage.CONTROLLER, (event) => { attributes = { ...event.context.attributes } })
  t.teardown(() => app.close())
  await app.inject({ url: '/hello/J%C3%BCrgen', headers: { host: 'example.test' } })
  t.equal(attributes._route, 'hello')
  t.equal(attributes._controller, 'hello')
  t.same(attributes._route_params, { name: 'Jürgen' })
})

t.test('bad listener registrations fail with clear errors', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  t.throws(() => app.kernel.on('kernel.nope' as never, () => {}), { code: 'KERNEL_UNKNOWN_STAGE' })
  t.throws(() => app.kernel.on(Stage.REQUEST, 'x' as never), { code: 'KERNEL_INVALID_LISTENER' })
  t.throws(() => app.kernel.on(Stage.REQUEST, () => {}, { priority: Number.NaN }), { code: 'KERNEL_INVALID_LISTENER' })
})

t.test('a client that goes away still gets kernel.terminate (aborted), never a leak', async (t) => {
  let release: () => void = () => {}
  let entered!: () => void
  const started = new Promise<void>((resolve) => { entered = resolve })
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/slow', async () => { entered(); await new Promise<void>((resolve) => { release = resolve }); return 'late' })
  })
  const terminated = new Promise<{ aborted: boolean, stages: string[] }>((resolve) => {
    app.kernel.on(Stage.TERMINATE, (event) => {
      resolve({ aborted: event.aborted, stages: event.context.trace.filter((e) => e.listener === undefined).map((e) => e.stage) })
    })
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const { connect } = await import('node:net')
  const socket = connect((app.server.address() as { port: number }).port, '127.0.0.1')
  socket.write('GET /slow HTTP/1.1\r\nHost: example.test\r\n\r\n')
  await started
  socket.destroy()
  const result = await terminated
  release()
  t.equal(result.aborted, true)
  t.same(result.stages.slice(-2), ['kernel.finish_request', 'kernel.terminate'])
})

t.test('without tracing (production default) every listener still runs in order, and nothing is recorded', async (t) => {
  const ran: string[] = []
  let context: KernelContext | null = null
  let resolveTerminated: () => void = () => {}
  const terminated = new Promise<void>((resolve) => { resolveTerminated = resolve })
  // listeners before the app is ready: without tracing a stage's hook comes with its first listener
  const app = await buildApp({ debug: false }, {}, (app) => {
    for (const stage of [Stage.REQUEST, Stage.CONTROLLER, Stage.CONTROLLER_ARGUMENTS, Stage.RESPONSE, Stage.FINISH_REQUEST, Stage.TERMINATE] as const) {
      app.kernel.on(stage, () => { ran.push(stage) })
    }
    app.kernel.on(Stage.TERMINATE, (event) => { context = event.context; resolveTerminated() }, { priority: -2000 })
  })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/hello/x', headers: { host: 'example.test' } })
  await terminated
  t.equal(res.statusCode, 200)
  t.same(ran, ['kernel.request', 'kernel.controller', 'kernel.controller_arguments', 'kernel.response', 'kernel.finish_request', 'kernel.terminate'])
  t.same((context as KernelContext | null)?.trace, [], 'trace is off by default without debug')

  const traced = await buildApp({ debug: false, trace: true })
  t.teardown(() => traced.close())
  let tracedContext: KernelContext | null = null
  const done = new Promise<void>((resolve) => {
    traced.kernel.on(Stage.TERMINATE, (event) => { tracedContext = event.context; resolve() })
  })
  await traced.inject({ url: '/hello/x', headers: { host: 'example.test' } })
  await done
  t.ok(((tracedContext as KernelContext | null)?.trace.length ?? 0) >= 5, 'trace: true records in production too')
})

t.test('event.fail() is a throw without its cost: later listeners and the controller do not run, kernel.exception answers', async (t) => {
  let controllerRan = false
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/guarded', async () => { controllerRan = true; return 'ok' })
  })
  t.teardown(() => app.close())
  const ran: string[] = []
  const { AccessDeniedHttpException } = await import('../../src/errors/exceptions.js')
  app.kernel.on(Stage.CONTROLLER_ARGUMENTS, function deny (event) {
    if (event.request.url === '/guarded') event.fail(new AccessDeniedHttpException())
  }, { priority: 10 })
  app.kernel.on(Stage.CONTROLLER_ARGUMENTS, function later () { ran.push('later') }, { priority: 0 })
  const res = await app.inject({ url: '/guarded', headers: { host: 'example.test', accept: 'application/json' } })
  t.equal(res.statusCode, 403)
  t.equal(res.json().detail, 'Access Denied.')
  t.notOk(controllerRan, 'the controller did not run')
  t.same(ran, [], 'later listeners of the stage did not run')
  const { trace } = await traced(app, '/guarded')
  t.equal(trace.find((e) => e.listener === 'deny')?.outcome, 'threw')
  t.same(trace.filter((e) => e.listener === undefined).map((e) => e.stage).slice(2, 4), ['kernel.controller_arguments', 'kernel.exception'])
})

t.test('a trailing-slash redirect runs the stages of a matched route; its controller redirects', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const ran: string[] = []
  app.kernel.on(Stage.REQUEST, function firewall () { ran.push('firewall') }, { priority: Priority.FIREWALL })
  let attributes: Record<string, unknown> = {}
  app.kernel.on(Stage.CONTROLLER, (event) => { attributes = { ...event.context.attributes } })
  const { stages, status } = await traced(app, '/blog')
  t.equal(status, 301)
  t.same(stages, ['kernel.request', 'kernel.controller', 'kernel.controller_arguments', 'kernel.response', 'kernel.finish_request', 'kernel.terminate'])
  t.same(ran, ['firewall'], 'request listeners after the router run, as for any match')
  t.equal(attributes._route, 'blog')
  t.equal(attributes._controller, 'redirect')
})

t.test('without debug, a stage gets its Fastify hook with its first listener: before the app is ready', async (t) => {
  const app = await buildApp({ debug: false })
  t.teardown(() => app.close())
  t.throws(() => app.kernel.on(Stage.RESPONSE, () => {}), { code: 'KERNEL_LATE_LISTENER', message: /the first "kernel.response" listener was added after the app was ready/ })
  t.throws(() => app.kernel.on(Stage.TERMINATE, () => {}), { code: 'KERNEL_LATE_LISTENER' })
  t.same(app.kernel.listeners(Stage.RESPONSE), [], 'the refused listener is not half-added')
  // kernel.request and the controller stages too: production's default has nothing but the
  // router on kernel.request, whose work needs no onRequest hook
  t.throws(() => app.kernel.on(Stage.REQUEST, () => {}), { code: 'KERNEL_LATE_LISTENER', message: /the first "kernel.request" listener/ })
  t.throws(() => app.kernel.on(Stage.CONTROLLER, () => {}), { code: 'KERNEL_LATE_LISTENER', message: /the first "kernel.controller" listener/ })
  t.throws(() => app.kernel.on(Stage.CONTROLLER_ARGUMENTS, () => {}), { code: 'KERNEL_LATE_LISTENER' })
  t.same(app.kernel.listeners(Stage.REQUEST).map(({ name }) => name), ['router'], 'only the router listens')
  // a stage whose hook is there takes listeners at any time
  let seen = 0
  const listening = await buildApp({ debug: false }, {}, (app) => {
    app.kernel.on(Stage.REQUEST, () => { seen++ })
    app.kernel.on(Stage.CONTROLLER, () => { seen++ })
  })
  t.teardown(() => listening.close())
  listening.kernel.on(Stage.REQUEST, () => { seen++ })
  listening.kernel.on(Stage.CONTROLLER_ARGUMENTS, () => { seen++ })
  await listening.inject({ url: '/about', headers: { host: 'example.test' } })
  t.equal(seen, 4)
  const traced = await buildApp({ debug: false, trace: true })
  t.teardown(() => traced.close())
  traced.kernel.on(Stage.RESPONSE, (event) => { event.reply.header('x-late', 'yes') })
  t.equal((await traced.inject({ url: '/about', headers: { host: 'example.test' } })).headers['x-late'], 'yes', 'traced: every hook is there')
})
