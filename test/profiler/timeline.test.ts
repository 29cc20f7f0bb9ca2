/**
 * The timeline (`time`): the stage and listener waterfall, the controller, every span of the
 * request by the shared span contract, the app's stopwatch periods and its performance.measure()s.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildApp } from '../helpers.js'
import { host, page, profiled } from './helpers.js'
import { startSpan } from '../../src/profiler/spans.js'
import { errorCodes } from '../../index.js'
import type { TimelineRow } from '../../index.js'

const spanRows = (rows: readonly TimelineRow[]): TimelineRow[] => rows.filter((row) => !['stage', 'listener', 'controller'].includes(row.kind))

t.test('the stopwatch: periods by category, laps, a period still running when the response was sent', async (t) => {
  let release!: () => void
  const after = new Promise<void>((resolve) => { release = resolve })
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/stopwatch', async (request) => {
      const stopwatch = request.kernel!.stopwatch
      const event = stopwatch.start('pricing', 'domain')
      t.equal(event.category, 'domain')
      t.ok(stopwatch.isStarted('pricing'))
      await sleep(2)
      stopwatch.lap('pricing')
      await sleep(1)
      const stopped = stopwatch.stop('pricing')
      t.equal(stopped.periods.length, 2, 'a lap ends a period and starts the next')
      t.ok(stopped.periods.every((p) => p.duration !== null && p.duration > 0))
      t.equal(stopped.duration, stopped.periods.reduce((sum, p) => sum + (p.duration ?? 0), 0))
      t.notOk(stopped.started)
      stopwatch.start('render')
      stopwatch.stop('render')
      // runs on after the response: shown as still running
      stopwatch.start('cleanup', 'io')
      t.same(stopwatch.events().map((e) => [e.name, e.category]), [['pricing', 'domain'], ['render', 'default'], ['cleanup', 'io']])
      t.throws(() => stopwatch.stop('never started'), { code: 'KERNEL_STOPWATCH_NOT_STARTED', message: 'fastify-kernel: the stopwatch event "never started" is not started.' })
      setImmediate(release)
      return 'ok'
    })
  })
  t.teardown(() => app.close())
  const { profile, token } = await profiled(app, { url: '/stopwatch' })
  await after
  const rows = spanRows(profile.collected.time!.timeline!.rows)
  t.same(rows.map((r) => [r.kind, r.name, r.category, r.duration === null]), [
    ['app', 'pricing', 'domain', false],
    ['app', 'pricing', 'domain', false],
    ['app', 'render', 'default', false],
    ['app', 'cleanup', 'io', true]
  ])
  const panel = await page(app, `/_profiler/${token}?panel=time`)
  t.match(panel.body, /<div class="wf-row span" data-kind="app">/)
  t.match(panel.body, /<span class="kind">app:domain<\/span>pricing/)
  t.match(panel.body, 'running</div>', 'the running period says so')
  t.match(panel.body, /<td class="mono">domain<\/td><td class="mono">pricing<\/td><td>2<\/td>/, 'the stopwatch table: the event by category, its periods')
  t.match(panel.body, /<td class="mono">io<\/td><td class="mono">cleanup<\/td><td>1<\/td><td>0\.00 \(one still running\)/)
})

t.test('stages, listeners, the controller and spans in one waterfall, in order of start', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/io', async () => {
      startSpan('http_client', 'GET https://user:secret@api.example/orders?api_key=k-123&page=2', { method: 'GET' }).end({ status: 200 })
      await sleep(1)
      startSpan('db', 'SELECT * FROM orders WHERE id = ?', { system: 'mysql' }).end({ rows: 1 })
      startSpan('cache', 'GET cart:7', { command: 'GET' }).fail(new Error('connection reset'))
      startSpan('otel', 'mongodb.find', {}).end()
      startSpan('app', 'session read', { category: 'io', kernel: true, purpose: 'session' }).end()
      startSpan('made_up', '<img src=x onerror=alert(1)>').end()
      return 'ok'
    })
  })
  t.teardown(() => app.close())
  const { profile, token } = await profiled(app, { url: '/io' })
  const rows = profile.collected.time!.timeline!.rows
  t.same(rows.filter((r) => r.kind === 'stage').map((r) => r.name), ['kernel.request', 'kernel.controller', 'kernel.controller_arguments', 'kernel.response', 'kernel.finish_request', 'kernel.terminate'])
  t.ok(rows.some((r) => r.kind === 'listener' && r.name === 'router' && r.priority === 32), 'listeners with their priority')
  const controller = rows.find((r) => r.kind === 'controller')!
  const spans = spanRows(rows)
  t.same(spans.map((r) => r.kind), ['http_client', 'db', 'cache', 'otel', 'app', 'made_up'])
  t.equal(spans[4].kernel, 'session', 'the kernel\'s own call, with its purpose')
  t.ok(spans.every((r) => r.start >= controller.start && r.start <= controller.start + controller.duration!), 'the controller\'s spans fall within it')
  t.same(rows.map((r) => r.start), rows.map((r) => r.start).sort((a, b) => a - b), 'ordered by start')
  t.equal(spans[0].name, 'GET https://******@api.example/orders?api_key=******&page=2', 'user-info and secret query values masked')
  t.equal(spans[2].error, 'connection reset')

  const body = (await page(app, `/_profiler/${token}?panel=time`)).body
  t.notMatch(body, /k-123|secret@/, 'no secret reaches the page')
  t.notMatch(body, '<img src=x', 'a span name is escaped')
  t.match(body, '&lt;img src&#x3D;x onerror&#x3D;alert(1)&gt;')
  for (const kind of ['http_client', 'db', 'cache', 'otel']) t.match(body, `<rect class="bar k-${kind}`, `${kind} has its colour`)
  t.match(body, '<rect class="bar k-other', 'a kind the timeline does not know is shown, uncoloured')
  t.match(body, /<rect class="bar k-cache[^"]* failed"/, 'a failed span is marked')
  t.match(body, /id="timeline-legend">.*HTTP client <b>1<\/b>.*Database <b>1<\/b>/s)
  t.match(body, /session read <span class="kind">\(the kernel's: session\)<\/span>/)
})

t.test('spans over maxSpans are counted: "+N more"', async (t) => {
  const app = await buildApp({ debug: true, profiler: { maxSpans: 3 } }, {}, (app) => {
    app.get('/many', async () => {
      for (let i = 0; i < 10; i++) startSpan('db', `SELECT ${i}`).end()
      return 'ok'
    })
  })
  t.teardown(() => app.close())
  const { profile, token } = await profiled(app, { url: '/many' })
  t.equal(spanRows(profile.collected.time!.timeline!.rows).length, 3)
  t.equal(profile.collected.time!.timeline!.dropped, 7)
  t.match((await page(app, `/_profiler/${token}?panel=time`)).body, '+7 more spans, not kept')
})

t.test('performance.measure(): each of 20 concurrent requests gets exactly its own measures', async (t) => {
  const original = performance.measure
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/measure/:id', async (request) => {
      const id = (request.params as { id: string }).id
      performance.mark(`start-${id}`)
      // the requests' time windows overlap: only the call's own context can say whose it is
      await sleep(Number(id) % 5)
      performance.measure(`measure-${id}`, `start-${id}`)
      await new Promise((resolve) => setImmediate(resolve))
      performance.measure(`second-${id}`, { start: performance.now() - 1, duration: 1 })
      return id
    })
    app.get('/quiet', async () => 'quiet')
  })
  t.teardown(() => app.close())
  t.not(performance.measure, original, 'wrapped while a profiler is alive')
  performance.measure('at start-up')
  const timer = setInterval(() => { performance.measure('in the app\'s own timer') }, 1)
  t.teardown(() => { clearInterval(timer) })
  const ids = Array.from({ length: 20 }, (_v, i) => String(i))
  const results = await Promise.all(ids.map((id) => profiled(app, { url: `/measure/${id}` })))
  for (const [index, { profile }] of results.entries()) {
    const measures = spanRows(profile.collected.time!.timeline!.rows).filter((r) => r.kind === 'measure')
    t.same(measures.map((r) => r.name), [`measure-${index}`, `second-${index}`], `request ${index}: its own measures only`)
    t.ok(measures[0].duration! >= 0 && measures[0].start >= 0)
  }
  const quiet = await profiled(app, { url: '/quiet' })
  t.same(spanRows(quiet.profile.collected.time!.timeline!.rows), [], 'a request that measured nothing has none, whatever ran meanwhile')
  await app.close()
  t.equal(performance.measure, original, 'the original is back once the last profiler closed')
})

t.test('production: request.kernel.stopwatch is a no-op, performance.measure is not wrapped', async (t) => {
  const original = performance.measure
  const app = await buildApp({ debug: false }, {}, (app) => {
    app.get('/prod', async (request) => {
      const stopwatch = request.kernel!.stopwatch
      stopwatch.start('x', 'domain')
      const event = stopwatch.stop('never started')
      return { started: stopwatch.isStarted('x'), events: stopwatch.events().length, periods: event.periods.length }
    })
  })
  t.teardown(() => app.close())
  t.equal(performance.measure, original)
  const res = await app.inject({ url: '/prod', headers: { host } })
  t.same(res.json(), { started: false, events: 0, periods: 0 }, 'records nothing, never throws')
  t.equal(new errorCodes.KERNEL_STOPWATCH_NOT_STARTED('x').code, 'KERNEL_STOPWATCH_NOT_STARTED')
})

t.test('the time toolbar item is highlighted above profiler.thresholds.time', async (t) => {
  const slow = await buildApp({ debug: true, profiler: { thresholds: { time: 0 } } })
  t.teardown(() => slow.close())
  const fast = await buildApp({ debug: true })
  t.teardown(() => fast.close())
  for (const [app, highlighted] of [[slow, true], [fast, false]] as const) {
    const { token } = await profiled(app, { url: '/about' })
    const toolbar = (await page(app, `/_wdt/${token}`)).body
    t.equal(/<div class="kwdt-item kwdt-slow" data-kwdt="time">/.test(toolbar), highlighted, `highlighted: ${String(highlighted)}`)
    t.match(toolbar, /data-kwdt-spans>0</)
  }
  await t.rejects(buildApp({ debug: true, profiler: { thresholds: { time: -1 } } }), { code: 'KERNEL_INVALID_OPTIONS', message: /profiler\.thresholds\.time/ })
  await t.rejects(buildApp({ debug: true, profiler: { thresholds: { sql: 1 } as never } }), { message: /unknown option "profiler\.thresholds\.sql"/ })
})
