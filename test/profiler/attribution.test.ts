/**
 * What a request calls is recorded in that request's profile, and nothing else: the request runs
 * inside the kernel's own async context, through the hooks, the body, the controller.
 */
import t from 'tap'
import { request } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { profilerOf, buildApp } from '../helpers.js'
import { profiled, spansCollector } from './helpers.js'
import { Stage } from '../../index.js'
import { startSpan } from '../../src/profiler/spans.js'

t.test('50 concurrent requests, each making its own calls, get exactly their own spans', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    spansCollector(app)
    app.get('/work/:id', async (request) => {
      const id = (request.params as { id: string }).id
      // calls across awaits and timers of the request itself
      startSpan('test', `first ${id}`).end()
      await sleep(Number(id) % 7)
      startSpan('test', `second ${id}`).end()
      await new Promise<void>((resolve) => { setImmediate(() => { startSpan('test', `third ${id}`).end(); resolve() }) })
      return id
    })
  })
  t.teardown(() => app.close())
  const ids = Array.from({ length: 50 }, (_value, index) => String(index))
  const results = await Promise.all(ids.map((id) => profiled(app, { url: `/work/${id}` })))
  for (const [index, { profile }] of results.entries()) {
    t.same(profile.collected.spans!.spans.map((span) => span.name), [`first ${index}`, `second ${index}`, `third ${index}`], `request ${index}: its own three spans, in order`)
  }
})

t.test('a request with a body sent on a socket: its controller still runs in the request\'s context', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    spansCollector(app)
    app.post('/upload', async (request) => {
      startSpan('test', 'after the body', { size: JSON.stringify(request.body).length }).end()
      return 'ok'
    })
  })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  // the body arrives in two packets: Node emits its data and end events in the socket's context
  const token = await new Promise<string>((resolve, reject) => {
    const client = request({ port, method: 'POST', path: '/upload', headers: { host: 'example.test', 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
      res.resume()
      res.on('end', () => { resolve(String(res.headers['x-debug-token'])) })
    })
    client.on('error', reject)
    client.write('{"a": "' + 'x'.repeat(5000))
    setTimeout(() => { client.end('"}') }, 20)
  })
  await app.kernelProfiler!.settled()
  const profile = await profilerOf(app).storage.load(token)
  t.same(profile!.collected.spans!.spans.map((span) => span.name), ['after the body'])
})

t.test('calls at start-up, in the app\'s own timers, or after the response are never attributed', async (t) => {
  let timer: NodeJS.Timeout | undefined
  const ticks: number[] = []
  const app = await buildApp({ debug: true }, {}, (app) => {
    spansCollector(app)
    startSpan('test', 'at start-up').end()
    timer = setInterval(() => { ticks.push(1); startSpan('test', 'in an interval').end() }, 1)
    app.get('/slow-tail', async () => {
      // never ended
      startSpan('test', 'still running')
      const late = startSpan('test', 'ends later')
      setImmediate(() => { late.end(); startSpan('test', 'started after the response').end() })
      return 'ok'
    })
    app.kernel.on(Stage.REQUEST, () => { startSpan('test', 'in a listener').end() }, { priority: 10 })
  })
  t.teardown(async () => { clearInterval(timer); await app.close() })
  // the interval has run while requests were on
  const first = await profiled(app, { url: '/slow-tail' })
  while (ticks.length < 3) await sleep(1)
  const second = await profiled(app, { url: '/slow-tail' })
  for (const { profile } of [first, second]) {
    const spans = profile.collected.spans!.spans
    t.same(spans.map((span) => span.name), ['in a listener', 'still running', 'ends later'], 'only the request\'s own')
    t.equal(spans.find((span) => span.name === 'still running')!.duration, null, 'a call still running when the response was sent is shown as running')
    t.equal(spans.find((span) => span.name === 'ends later')!.duration, null, 'one that ended after it, too')
    t.type(spans[0].duration, 'number')
  }
})

t.test('at most maxSpans spans a profile; the rest are counted', async (t) => {
  const app = await buildApp({ debug: true, profiler: { maxSpans: 5 } }, {}, (app) => {
    spansCollector(app)
    app.get('/many', async () => {
      for (let i = 0; i < 12; i++) startSpan('test', `span ${i}`).end()
      return 'ok'
    })
  })
  t.teardown(() => app.close())
  const { profile } = await profiled(app, { url: '/many' })
  t.equal(profile.collected.spans!.spans.length, 5)
  t.equal(profile.collected.spans!.dropped, 7, '+7 more')
})

t.test('production: no async context, startSpan is a no-op', async (t) => {
  const app = await buildApp({ debug: false }, {}, (app) => {
    app.get('/prod', async () => {
      const span = startSpan('test', 'nothing records it')
      span.end()
      return 'ok'
    })
  })
  t.teardown(() => app.close())
  t.equal(app.kernel.tracksAsyncContext, false, 'the kernel does not track requests')
  t.equal((await app.inject({ url: '/prod', headers: { host: 'example.test' } })).body, 'ok')
})
