/**
 * Capture that guards itself (issue 34), for a profiler left on in shared dev, staging and load
 * tests: an exception is kept from a request the capture mode or the save budget left out;
 * paths, routes and statuses are excluded; capture pauses while the event loop lags (an injected
 * lag source: no real lag, no waiting), counted and shown on the toolbar and the search page;
 * bad option values stop the app at start with a coded error.
 */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, profilerOf } from '../helpers.js'
import { errorCodes } from '../../index.js'
import type { KernelOptions } from '../../index.js'
import type { LagSource } from '../../src/profiler/guards/lag.js'
import { eventLoopLag, profilerBlockedMs, windowLag } from '../../src/profiler/guards/lag.js'
import { CpuSampler } from '../../src/profiler/panels/cpu/sampler.js'
import type { CpuRun } from '../../src/profiler/panels/cpu/sampler.js'
import { pathMatcher } from '../../src/profiler/guards/paths.js'
import { host, page } from './helpers.js'

const HTML = '<!doctype html><html><head><title>t</title></head><body><p>page</p></body></html>'

/** The app of these tests: the helpers' routes, and a few of their own. */
async function guardedApp (profiler: NonNullable<KernelOptions['profiler']>): Promise<FastifyInstance> {
  const app = await buildApp({ debug: true, profiler }, {}, (app) => {
    app.get('/page', async (_request, reply) => reply.type('text/html').send(HTML))
    app.get('/health', async (_request, reply) => reply.type('text/html').send(HTML))
    app.get('/assets/app.css', async (_request, reply) => reply.type('text/css').send('p{}'))
    app.get('/quiet', { config: { profiler: false } }, async (_request, reply) => reply.type('text/html').send(HTML))
    app.get('/quiet-boom', { config: { profiler: false } }, async () => { throw new Error('quiet kaboom') })
    app.get('/unavailable', async (_request, reply) => reply.code(503).send('down for a moment'))
    app.get('/not-modified', async (_request, reply) => reply.code(304).send())
  })
  t.teardown(() => app.close())
  return app
}

async function get (app: FastifyInstance, url: string, headers: Record<string, string> = {}): Promise<{ status: number, token: string | undefined, body: string }> {
  const res = await app.inject({ url, headers: { host, ...headers } })
  const token = res.headers['x-debug-token']
  return { status: res.statusCode, token: typeof token === 'string' ? token : undefined, body: res.body }
}

const TOOLBAR_SNIPPET = 'data-kwdt-snippet'

t.test('an exception is kept from a request the sample left out; a sampled-out success is not', async (t) => {
  const app = await guardedApp({ capture: { sample: 1 } })
  profilerOf(app).capture.random = () => 0.99
  const ok = await get(app, '/page', { accept: 'text/html' })
  t.equal(ok.token, undefined, 'a 200 the sample left out: no token')
  t.notMatch(ok.body, TOOLBAR_SNIPPET, 'and no toolbar')
  t.equal((await get(app, '/nope')).token, undefined, 'a 404 (a client error) is not an exception: left out')

  const boom = await app.inject({ url: '/boom', headers: { host, accept: 'text/html' } })
  t.equal(boom.statusCode, 500)
  const token = boom.headers['x-debug-token'] as string
  t.ok(token, 'the sampled-out request that threw has a token all the same')
  t.match(boom.body, `/_profiler/${token}`, 'its debug error page links the profile')
  t.match(boom.body, TOOLBAR_SNIPPET, 'and gets the toolbar')
  const profile = await app.kernelProfiler.profileOf(token)
  t.same(profile.collected.exception!.map((e) => [e.class, e.message, e.statusCode]), [['Error', 'kaboom', 500], ['TypeError', 'inner failure', 500]], 'its profile has the exception panel, whole chain')
  t.equal(profile.statusCode, 500)
  t.equal(profile.url, 'http://example.test/boom')

  const unavailable = await get(app, '/unavailable')
  t.equal(unavailable.status, 503)
  t.ok(unavailable.token, 'a 5xx sent without a throw (reply.code(503)) is kept too')

  await app.kernelProfiler.settled()
  t.equal(profilerOf(app).storage.size, 2, 'only the two failures are stored')
  t.equal(profilerOf(app).guards.exceptionsKept, 2, 'counted')
  t.match((await page(app, '/_profiler/')).body, '<p id="exceptions-kept">2 exceptions kept from requests the capture mode, the save budget or a pause left out.</p>', 'the search page says so')
})

t.test('a unit of work the sample left out that throws is kept too (record())', async (t) => {
  const app = await guardedApp({ capture: { sample: 1 } })
  profilerOf(app).capture.random = () => 0.99
  t.equal(await app.kernelProfiler.record({ kind: 'job', name: 'fine' }, (token) => token), undefined, 'left out: no token given')
  await t.rejects(app.kernelProfiler.record({ kind: 'job', name: 'broken' }, () => { throw new Error('job failed') }), { message: 'job failed' }, 'its error is thrown as before')
  await app.kernelProfiler.settled()
  const kept = await profilerOf(app).storage.find({})
  t.same(kept.map((summary) => summary.name), ['broken'], 'only the unit that threw is stored')
  const profile = await app.kernelProfiler.profileOf(kept[0]!.token)
  t.equal(profile.kind, 'job')
  t.same(profile.collected.exception!.map((e) => e.message), ['job failed'], 'with its exception')
})

t.test('an exception is kept past the save budget; keepExceptions: false leaves it out', async (t) => {
  // the memory storage past keepPerSecond records 1 unit in 1 / saveBudget: 1 in 100 here
  const app = await guardedApp({ saveBudget: 0.01, keepPerSecond: 0 })
  t.equal((await get(app, '/about')).token, undefined, 'over the budget: not profiled')
  const boom = await get(app, '/boom')
  t.ok(boom.token, 'over the budget, an exception is profiled all the same')
  t.ok((await app.kernelProfiler.profileOf(boom.token!)).collected.exception!.length > 0)

  const off = await guardedApp({ capture: { sample: 1 }, keepExceptions: false })
  profilerOf(off).capture.random = () => 0.99
  t.equal((await get(off, '/boom')).token, undefined, 'keepExceptions: false: the left-out exception stays out')
  t.notOk(off.kernel.listeners().some((listener) => listener.name === 'profiler exception'), 'and no kernel.exception listener is added for it')
  t.ok(app.kernel.listeners().some((listener) => listener.stage === 'kernel.exception' && listener.name === 'profiler exception' && listener.priority === -64), 'on by default: one kernel.exception listener')
})

t.test('the slow mode keeps a fast exception (keepExceptions)', async (t) => {
  const app = await guardedApp({ capture: { slowerThan: 1e9 } })
  t.equal((await get(app, '/about')).token, undefined, 'a fast 200: not kept')
  t.ok((await get(app, '/boom')).token, 'a fast 500: kept')
})

t.test('excluded paths, a route with config: { profiler: false } and excluded statuses cost no profile and show no toolbar', async (t) => {
  const app = await guardedApp({ excludedPaths: ['/health', '/assets/*'], excludedHttpCodes: [304], capture: { sample: 1 } })
  profilerOf(app).capture.random = () => 0 // the sample takes every request: only the exclusions leave them out
  const recorded = await get(app, '/page', { accept: 'text/html' })
  t.ok(recorded.token, 'a page neither excluded nor sampled out is profiled')
  t.match(recorded.body, TOOLBAR_SNIPPET)

  for (const url of ['/health', '/health?probe=1', '/assets/app.css', '/quiet']) {
    const res = await get(app, url, { accept: 'text/html' })
    t.equal(res.status, 200, url)
    t.equal(res.token, undefined, `${url}: no token`)
    t.notMatch(res.body, TOOLBAR_SNIPPET, `${url}: no toolbar`)
  }
  t.equal(profilerOf(app).guards.excluded, 4, 'each counted as excluded, not as skipped by the sample')
  t.equal(profilerOf(app).capture.skipped, 0)

  const quietBoom = await get(app, '/quiet-boom')
  t.equal(quietBoom.status, 500)
  t.equal(quietBoom.token, undefined, 'a route that says profiler: false is not profiled even for an exception')

  const notModified = await get(app, '/not-modified')
  t.equal(notModified.status, 304)
  t.equal(notModified.token, undefined, 'an excluded status: its recording is let go, no token')
  t.ok((await get(app, '/about')).token, 'an ordinary status is kept')

  await app.kernelProfiler.settled()
  const urls = (await profilerOf(app).storage.find({})).map((summary) => summary.url).sort()
  t.same(urls, ['http://example.test/about', 'http://example.test/page'], 'only what is not excluded is stored')
  t.equal(profilerOf(app).dropped, 0, 'nothing excluded is counted as dropped')
})

t.test('a path pattern: * stands for any characters, the rest is literal', async (t) => {
  const matches = pathMatcher(['/health', '/assets/*', '/v1.0/*/status'])
  t.ok(matches('/health'))
  t.notOk(matches('/healthz'), 'no prefix match without *')
  t.ok(matches('/assets/a/b.css'), '* crosses slashes')
  t.ok(matches('/v1.0/x/status'))
  t.notOk(matches('/v1x0/x/status'), 'a dot is a dot')
  t.notOk(matches('/assets'), 'the slash before * is literal')
  t.ok(matches('/health?probe=1'), 'the query is not read')
  t.notOk(matches('/v1.0/x?/status'), '* does not cross into the query')
  t.notOk(matches('/x?next=/health'), 'a path in the query is not the path')
})

/** A lag source the test moves by hand. */
class ManualLag implements LagSource {
  lag = 0
  closed = false
  lagMs (): number { return this.lag }
  close (): void { this.closed = true }
}

t.test('capture pauses while the event loop lags past maxEventLoopDelay, resumes under half of it, and says so', async (t) => {
  const app = await guardedApp({ maxEventLoopDelay: 50 })
  const lag = new ManualLag()
  const pause = profilerOf(app).guards.lag!
  const process = pause.source
  pause.source = lag
  t.teardown(() => { process.close() })
  t.equal(pause.thresholdMs, 50)

  t.ok((await get(app, '/about')).token, 'no lag: profiled')
  t.notMatch((await page(app, '/_profiler/')).body, 'id="capture-paused"', 'nothing to say before a pause')

  lag.lag = 80
  const paused = await get(app, '/page', { accept: 'text/html' })
  t.equal(paused.token, undefined, 'lagging past 50 ms: not profiled')
  t.notMatch(paused.body, TOOLBAR_SNIPPET, 'no toolbar')
  t.equal((await get(app, '/about')).token, undefined)
  t.ok((await get(app, '/about', { 'x-kernel-profile': '1' })).token, 'a request that asks is profiled while paused')
  lag.lag = 30
  t.equal((await get(app, '/about')).token, undefined, 'at 30 ms, above half the threshold: still paused')
  t.equal(pause.pauses, 1, 'one pause')
  t.equal(pause.notProfiled, 3, 'three requests not profiled while it lasted')
  t.match((await page(app, '/_profiler/')).body, '<p id="capture-paused">Event loop: capture paused 1 time (paused now), 3 requests not profiled while the event loop lagged &gt; 50 ms.</p>', 'the search page says it, paused now')

  lag.lag = 20
  const resumed = await get(app, '/page', { accept: 'text/html' })
  t.ok(resumed.token, 'under half the threshold: capture resumes')
  t.match(resumed.body, TOOLBAR_SNIPPET)
  const toolbar = await page(app, `/_wdt/${resumed.token!}`)
  t.equal(toolbar.statusCode, 200)
  t.match(toolbar.body, /<div class="kwdt-item" data-kwdt="capture-paused"><a class="kwdt-main" href="[^"]*#capture-paused" title="Event loop: capture paused 1 time, 3 requests not profiled while the event loop lagged &gt; 50 ms"><span class="kwdt-label">Capture paused<\/span> <span class="kwdt-badge">1&times;<\/span>/, 'the toolbar of the request profiled right after shows the pause')

  lag.lag = 51
  t.equal((await get(app, '/about')).token, undefined, 'a second pause')
  const boom = await get(app, '/boom')
  t.ok(boom.token, 'an exception is kept while paused (and not counted as not profiled)')
  lag.lag = 0
  t.ok((await get(app, '/about')).token)
  t.equal(pause.pauses, 2)
  t.equal(pause.notProfiled, 4)
  t.match((await page(app, '/_profiler/')).body, 'Event loop: capture paused 2 times, 4 requests not profiled while the event loop lagged &gt; 50 ms.')

  await app.close()
  t.ok(lag.closed, 'the lag source is closed with the app')
})

t.test('maxEventLoopDelay: false never pauses (no lag source at all)', async (t) => {
  const app = await guardedApp({ maxEventLoopDelay: false })
  t.equal(profilerOf(app).guards.lag, undefined)
  t.ok((await get(app, '/about')).token)
})

t.test('the process lag source reads a figure, and stops', async (t) => {
  const source = eventLoopLag()
  const lag = source.lagMs()
  t.ok(Number.isFinite(lag) && lag >= 0, 'a finite figure, in ms')
  source.close()
})

t.test('the profiler\'s own block is no lag: a CPU profile\'s start and stop are taken out of the window they fall in', async (t) => {
  // a window of 50 samples whose timer came 120 ms late: one block of 120 ms
  t.equal(windowLag(10 + 120 / 50, 50, 120, 0), 120, 'the app\'s block: lag')
  t.equal(windowLag(10 + 120 / 50, 50, 120, 120), 0, 'the profiler\'s own: none')
  t.equal(windowLag(40 + 120 / 50, 50, 120, 120), 30, 'the profiler\'s block on a loop lagging 30 ms besides: 30')
  t.equal(windowLag(0, 0, 0, 5), 0, 'never below zero')
  const sampler = new CpuSampler(100, 50, () => () => {})
  const release = sampler.retain()
  t.teardown(release)
  const before = profilerBlockedMs()
  const run = sampler.start('aaaaaa') as CpuRun
  const started = profilerBlockedMs()
  t.ok(started > before, `the start counted as the profiler's own block (${(started - before).toFixed(2)} ms)`)
  const result = await run.stop()
  t.ok(result.profile !== undefined, 'a profile was taken')
  t.ok(profilerBlockedMs() > started, 'and the stop')
})

t.test('bad guard options stop the app at start, each named', async (t) => {
  const bad: Array<[Record<string, unknown>, string]> = [
    [{ excludedPaths: ['health'] }, 'profiler.excludedPaths/0'],
    [{ excludedPaths: '/health' }, 'profiler.excludedPaths'],
    [{ excludedHttpCodes: [99] }, 'profiler.excludedHttpCodes/0'],
    [{ excludedHttpCodes: [304.5] }, 'profiler.excludedHttpCodes/0'],
    [{ keepExceptions: 'yes' }, 'profiler.keepExceptions'],
    [{ maxEventLoopDelay: 0 }, 'profiler.maxEventLoopDelay'],
    [{ maxEventLoopDelay: 120_000 }, 'profiler.maxEventLoopDelay'],
    [{ maxEventLoopDelay: Number.NaN }, 'profiler.maxEventLoopDelay'],
    [{ maxEventLoopDelay: true }, 'profiler.maxEventLoopDelay'],
    [{ maxEventLoopDelay: -5 }, 'profiler.maxEventLoopDelay']
  ]
  for (const [profiler, named] of bad) {
    const started = buildApp({ debug: true, profiler: profiler as never })
    await t.rejects(started, errorCodes.KERNEL_INVALID_OPTIONS, JSON.stringify(profiler))
    await t.rejects(started, { message: new RegExp(`option "${named.replace(/\//g, '.').replace(/\./g, '\\.')}`) }, `${JSON.stringify(profiler)} names ${named}`)
  }
  await t.rejects(buildApp({ debug: true, profiler: { maxEventLoopDelay: true as never } }), { message: 'fastify-kernel: invalid options: option "profiler.maxEventLoopDelay" must be milliseconds (above 0, up to 60000) or false, got true.' }, 'in one sentence, with what it got')
})
