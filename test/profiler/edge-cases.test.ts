import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { request as httpRequest } from 'node:http'
import { profilerOf, buildApp } from '../helpers.js'
import { Priority, Stage } from '../../index.js'
import { host, page, profiled } from './helpers.js'

t.test('a client that goes away: terminate still saves the profile, marked aborted', async (t) => {
  let entered!: () => void
  const started = new Promise<void>((resolve) => { entered = resolve })
  let release!: () => void
  const held = new Promise<void>((resolve) => { release = resolve })
  let terminated!: () => void
  const terminate = new Promise<void>((resolve) => { terminated = resolve })
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/slow', async () => {
      entered()
      await held
      return 'late'
    })
    // after the profile save's listener: the save has begun when this runs
    app.kernel.on(Stage.TERMINATE, () => { terminated() }, { priority: Priority.PROFILE_SAVE - 1 })
  })
  // the controller is still running while the test looks: it ends with the test
  t.teardown(() => { release(); return app.close() })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port
  const client = httpRequest({ port, path: '/slow', headers: { host } })
  client.on('error', () => {})
  client.end()
  await started
  client.destroy()
  await terminate
  await app.kernelProfiler!.settled()
  const [summary] = await profilerOf(app).storage.find({ url: '/slow' })
  t.ok(summary, 'the aborted request has a profile')
  const profile = await profilerOf(app).storage.load(summary.token)
  t.equal(profile!.aborted, true)
  t.equal(profile!.collected.request!.response, null)
  const res = await page(app, `/_profiler/${summary.token}`)
  t.equal(res.statusCode, 200)
  t.match(res.body, 'the client went away before the response was sent')
  t.match(res.body, '<span class="status status-none" id="status">aborted</span>')
})

t.test('a request Fastify rejected before routing (bad URL encoding) is profiled too', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const { res, profile } = await profiled(app, { url: '/bad%zz' })
  t.equal(res.statusCode, 404)
  t.equal(profile.collected.exception![0].message, 'No route found for "GET http://example.test/bad%zz"')
  t.equal(profile.collected.routing!.outcome, 'not-found')
})

t.test('with trace off the events panel says so; the rest still works', async (t) => {
  const app = await buildApp({ debug: true, trace: false })
  t.teardown(() => app.close())
  const { token, profile } = await profiled(app, { url: '/about' })
  t.equal(profile.collected.events!.tracing, false)
  t.same(profile.collected.events!.entries, [], 'nothing recorded')
  const res = await page(app, `/_profiler/${token}?panel=events`)
  t.equal(res.statusCode, 200)
  t.match(res.body, "The kernel's trace is off")
})

t.test('huge and hostile values are cut, never a 500', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const { res, profile, token } = await profiled(app, { url: `/${'a'.repeat(20_000)}`, headers: { 'x-big': 'b'.repeat(50_000), cookie: '%%%;;;=' } })
  t.equal(res.statusCode, 404)
  t.ok(profile.collected.request!.headers.find(([n]) => n === 'x-big')![1].length < 5000, 'long header values are cut')
  t.ok(profile.url.length < 9000, 'long URLs are cut')
  t.equal((await page(app, `/_profiler/${token}?panel=request`)).statusCode, 200)
  t.equal((await page(app, `/_profiler/${token}?panel=routing`)).statusCode, 200)
  t.equal((await page(app, `/_profiler/${'f'.repeat(10_000)}`)).statusCode, 200, 'a long token is just not found')
  t.equal((await page(app, '/_profiler/abcdef?panel[]=x&panel[]=y')).statusCode, 200)
})

t.test('under load beyond the save budget of a storage that writes out of the process, profiles are dropped and counted; requests are unaffected', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'kernel-budget-'))
  t.teardown(() => { rmSync(directory, { recursive: true, force: true }) })
  const app = await buildApp({ debug: true, profiler: { storage: 'file', directory, saveBudget: 0.0001, keepPerSecond: 20 } })
  t.teardown(() => app.close())
  const responses = await Promise.all(Array.from({ length: 300 }, (_, i) => app.inject({ url: `/hello/${i}`, headers: { host } })))
  t.ok(responses.every((res) => res.statusCode === 200 && /^[0-9a-f]{6}$/.test(String(res.headers['x-debug-token']))), 'every response is whole and has its token')
  await app.kernelProfiler!.settled()
  const stored = profilerOf(app).storage.size
  t.ok(profilerOf(app).dropped > 0, `${profilerOf(app).dropped} dropped`)
  t.equal(stored + profilerOf(app).dropped, 300, 'each request is either stored or counted as dropped')
  t.ok(stored >= 20, 'the first saves of a window are always kept')
  const search = await page(app, '/_profiler/')
  t.match(search.body, `<span id="dropped">${profilerOf(app).dropped} profiles were not stored`)
})

t.test('the memory storage under load: past keepPerSecond in a second, one unit in 1 / saveBudget is recorded; the others cost only debug mode', async (t) => {
  const app = await buildApp({ debug: true, profiler: { saveBudget: 0.25, keepPerSecond: 20 } })
  t.teardown(() => app.close())
  const responses = await Promise.all(Array.from({ length: 100 }, (_, i) => app.inject({ url: `/hello/${i}`, headers: { host } })))
  t.ok(responses.every((res) => res.statusCode === 200), 'every response is whole')
  await app.kernelProfiler!.settled()
  const stored = profilerOf(app).storage.size
  const tokened = responses.filter((res) => /^[0-9a-f]{6}$/.test(String(res.headers['x-debug-token']))).length
  t.equal(tokened, stored, 'a response has a token when, and only when, its request was recorded')
  t.equal(stored + profilerOf(app).dropped, 100, 'each request is either recorded or counted')
  // 20 first, then 1 in 4 of the 80 others (more if the burst spanned a second)
  t.ok(stored >= 40 && stored < 100, `${stored} recorded, ${profilerOf(app).dropped} not`)
  const full = await buildApp({ debug: true, profiler: { saveBudget: 1, keepPerSecond: 20 } })
  t.teardown(() => full.close())
  await Promise.all(Array.from({ length: 100 }, (_, i) => full.inject({ url: `/hello/${i}`, headers: { host } })))
  await full.kernelProfiler!.settled()
  t.equal(profilerOf(full).storage.size, 100, 'saveBudget 1: every unit (full capture)')
})

t.test('a burst below keepPerSecond is kept whole, whatever the budget (a page loading its assets is no load test)', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'kernel-budget-'))
  t.teardown(() => { rmSync(directory, { recursive: true, force: true }) })
  const app = await buildApp({ debug: true, profiler: { storage: 'file', directory, saveBudget: 0.0001 } })
  t.teardown(() => app.close())
  await Promise.all(Array.from({ length: 150 }, (_, i) => app.inject({ url: `/hello/${i}`, headers: { host } })))
  await app.kernelProfiler!.settled()
  t.equal(profilerOf(app).dropped, 0)
  t.equal(profilerOf(app).storage.size, 150)
})
