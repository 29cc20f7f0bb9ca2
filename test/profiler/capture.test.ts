/**
 * Capture modes (the `capture` option): every request, a sample, slow requests, errors, on
 * demand; a request that asks is recorded in every mode, and only for the clients the profiler
 * admits.
 */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, profilerOf } from '../helpers.js'
import { errorCodes } from '../../index.js'
import { CapturePolicy, captureMode } from '../../src/profiler/capture.js'
import { host, page } from './helpers.js'

async function tokenOf (app: FastifyInstance, url: string, headers: Record<string, string> = {}, remoteAddress?: string): Promise<string | undefined> {
  const res = await app.inject({ url, headers: { host, ...headers }, ...(remoteAddress === undefined ? {} : { remoteAddress }) })
  const token = res.headers['x-debug-token']
  return typeof token === 'string' ? token : undefined
}

t.test('the sample mode draws each request; one that asks is recorded whatever the draw', async (t) => {
  const app = await buildApp({ debug: true, profiler: { capture: { sample: 25 } } })
  t.teardown(() => app.close())
  const capture = profilerOf(app).capture
  const draws = [0.1, 0.3, 0.2, 0.9]
  capture.random = () => draws.shift() ?? 0.99
  const tokens = [await tokenOf(app, '/about'), await tokenOf(app, '/about'), await tokenOf(app, '/about'), await tokenOf(app, '/about')]
  t.same(tokens.map((token) => token !== undefined), [true, false, true, false], 'recorded when the draw (0 to 1) falls under 25 %')
  t.ok(await tokenOf(app, '/about', { 'x-kernel-profile': '1' }), 'asked with the header: recorded')
  await app.kernelProfiler.settled()
  t.equal(profilerOf(app).storage.size, 3)
  t.equal(capture.skipped, 2, 'the left-out requests are counted as skipped')
  t.equal(profilerOf(app).dropped, 0, 'not as dropped')
})

t.test('the slow mode keeps a request whose response came that late; the others get no token', async (t) => {
  for (const [slowerThan, kept] of [[0, true], [1e9, false]] as const) {
    const app = await buildApp({ debug: true, profiler: { capture: { slowerThan } } })
    t.teardown(() => app.close())
    t.equal(Boolean(await tokenOf(app, '/about')), kept, `slowerThan ${slowerThan}: ${kept ? 'kept' : 'not kept'}`)
    t.ok(await tokenOf(app, '/about', { 'x-kernel-profile': '1' }), 'a request that asks is kept')
    await app.kernelProfiler.settled()
    t.equal(profilerOf(app).storage.size, kept ? 2 : 1)
  }
})

t.test('the errors mode keeps failed requests (4xx, 5xx) and units that threw', async (t) => {
  const app = await buildApp({ debug: true, profiler: { capture: 'errors' } })
  t.teardown(() => app.close())
  t.equal(await tokenOf(app, '/about'), undefined, 'a 200: not kept, no token, no toolbar')
  const notFound = await tokenOf(app, '/nope')
  t.ok(notFound, 'a 404: kept')
  const failed = await tokenOf(app, '/boom')
  t.ok(failed, 'a 500: kept')
  await app.kernelProfiler.record({ kind: 'job', name: 'fine' }, () => 1)
  await t.rejects(app.kernelProfiler.record({ kind: 'job', name: 'broken' }, () => { throw new Error('no') }))
  await app.kernelProfiler.settled()
  const kept = await profilerOf(app).storage.find({})
  t.same(kept.map((summary) => summary.name ?? summary.url).sort(), ['broken', 'http://example.test/boom', 'http://example.test/nope'], 'only what failed is kept')
  const html = (await page(app, `/_profiler/${notFound!}?panel=request`)).body
  t.match(html, 'x-debug-token', 'the kept 404 is whole')
})

t.test('the on-demand mode records only what asks: the header, or a browser switched on from the search page', async (t) => {
  const app = await buildApp({ debug: true, profiler: { capture: 'on-demand' } })
  t.teardown(() => app.close())
  t.equal(await tokenOf(app, '/about'), undefined, 'not asked: not recorded')
  t.ok(await tokenOf(app, '/about', { 'x-kernel-profile': '1' }), 'the header asks')
  t.equal(await tokenOf(app, '/about', { 'x-kernel-profile': '1' }, '203.0.113.9'), undefined, 'but not from a client the profiler does not admit')

  const search = await page(app, '/_profiler/')
  t.match(search.body, 'Recording: <b>on demand</b>', 'the search page shows the mode')
  t.match(search.body, 'action="/_profiler/capture?record=on"', 'and offers to switch this browser on')
  const crossSite = await app.inject({ method: 'POST', url: '/_profiler/capture?record=on', headers: { host, 'sec-fetch-site': 'cross-site' } })
  t.equal(crossSite.statusCode, 403, 'never from another site')
  const on = await app.inject({ method: 'POST', url: '/_profiler/capture?record=on', headers: { host, 'sec-fetch-site': 'same-origin' } })
  t.equal(on.statusCode, 303)
  t.equal(on.headers.location, '/_profiler/')
  const cookie = String(on.headers['set-cookie'])
  t.match(cookie, /^kernel_profile=on; Max-Age=1800; Path=\/; HttpOnly; SameSite=Strict$/)
  const asked = await app.inject({ url: '/about', headers: { host, cookie: 'kernel_profile=on' } })
  const token = asked.headers['x-debug-token']
  t.ok(token, 'a browser switched on is recorded')
  const toolbar = await page(app, `/_wdt/${String(token)}`, { cookie: 'kernel_profile=on' })
  t.match(toolbar.body, 'data-kwdt="capture"', 'the toolbar shows the mode')
  t.match(toolbar.body, 'on demand (this browser)')
  t.match((await page(app, '/_profiler/', { cookie: 'kernel_profile=on' })).body, 'action="/_profiler/capture?record=off"', 'and the search page offers to switch it off')
  const off = await app.inject({ method: 'POST', url: '/_profiler/capture?record=off', headers: { host, 'sec-fetch-site': 'same-origin', cookie: 'kernel_profile=on' } })
  t.match(String(off.headers['set-cookie']), /^kernel_profile=; Max-Age=0;/, 'switched off: the cookie is cleared')
  t.equal((await app.inject({ method: 'POST', url: '/_profiler/capture?record=on', headers: { host }, remoteAddress: '203.0.113.9' })).statusCode, 404, 'the switch is the profiler\'s: absent for other clients')
  // a unit is recorded with the request that ran it, not on its own
  await app.kernelProfiler.record({ kind: 'job', name: 'alone' }, () => 1)
  await app.kernelProfiler.settled()
  t.equal((await profilerOf(app).storage.find({ kind: 'job' })).length, 0, 'a unit outside any recorded one is not recorded')
})

t.test('every request by default, and the mode shown nowhere then', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const token = await tokenOf(app, '/about')
  t.ok(token)
  t.match((await page(app, '/_profiler/')).body, 'Recording: <b>every request</b>')
  t.notMatch((await page(app, `/_wdt/${token!}`)).body, 'data-kwdt="capture"')
})

t.test('the capture option and setting are checked', async (t) => {
  for (const capture of ['some', { sample: 0 }, { sample: 101 }, { slowerThan: -1 }, { sample: 5, slowerThan: 3 }, []]) {
    await t.rejects(buildApp({ debug: true, profiler: { capture: capture as never } }), errorCodes.KERNEL_INVALID_OPTIONS, JSON.stringify(capture))
  }
  await t.rejects(buildApp({ debug: false, profiler: { capture: 'nope' as never } }), { message: /option "profiler.capture" must be "all", "errors", "on-demand"/ }, 'in production too')
  t.same(captureMode({ sample: 10 }), { mode: 'sample', percent: 10 })
  const policy = new CapturePolicy({ mode: 'sample', percent: 50 }, () => 0.7)
  t.equal(policy.records(() => false, true), true, 'a unit nested in a recorded one is recorded with it')
  t.equal(policy.records(() => false, false), false)
})
