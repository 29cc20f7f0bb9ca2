/**
 * A CPU profile of one chosen request: `X-Kernel-Profile: cpu` (or a browser armed by the
 * toolbar's "profile the next request") runs the request under V8's CPU profiler; its profile
 * gets a CPU panel with a flame graph and a `.cpuprofile` download. Only in debug, only for the
 * clients the profiler admits; other requests open no inspector session at all.
 */
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import ts from 'typescript'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../helpers.js'
import { host, page, profiled } from './helpers.js'
import { ManualClock } from '../clock.js'
import { processSampler } from '../../src/profiler/panels/cpu/sampler.js'
import { ARM_COOKIE, ARM_TTL_MS } from '../../src/profiler/panels/cpu/arming.js'
import type { CpuProfile } from '../../src/profiler/panels/cpu/cpu-profile.js'

/** Work that takes the CPU for a few milliseconds, bounded by its rounds, not by the clock. */
function burnCpuForReport (rounds: number): number {
  let sum = 0
  for (let i = 0; i < rounds; i++) sum += Math.sqrt(i) * Math.sin(i)
  return sum
}

// about 40 ms: V8's sampling thread must get the CPU during the burn, which a loaded 2-core
// machine (the suite's other files running) can withhold for a few milliseconds (4 ms burns
// were sampled not at all in about one run of four under CI's load)
const BURN_ROUNDS = 4_000_000
// Once the handler is hot, V8 (Node 24 and 26, TurboFan/Maglev) inlines the burn into it and the
// samples then name the handler: either is the application's function burning the CPU.
const BURNING = /^(?:burnCpuForReport|reportHandler)$/
const burning = (node: { callFrame: { functionName: string }, hitCount?: number }): boolean => BURNING.test(node.callFrame.functionName) && (node.hitCount ?? 0) > 0

async function appWithReport (kernel: Parameters<typeof buildApp>[0] = { debug: true }, fastify: Parameters<typeof buildApp>[1] = {}): Promise<FastifyInstance> {
  const app = await buildApp(kernel, fastify, (app) => {
    app.get('/report', async function reportHandler () { return { value: burnCpuForReport(BURN_ROUNDS) > 0 } })
    app.get('/page', async (_request, reply) => reply.type('text/html; charset=utf-8').send('<!DOCTYPE html><html><body><h1>Page</h1></body></html>'))
    app.get('/style.css', async (_request, reply) => reply.type('text/css').send('h1 { color: red }'))
  })
  return app
}

t.test('no inspector session is opened until a CPU profile is asked: a request without the header starts none', async (t) => {
  const app = await appWithReport()
  t.teardown(() => app.close())
  for (let i = 0; i < 3; i++) t.equal((await app.inject({ url: '/report', headers: { host } })).statusCode, 200)
  const { profile } = await profiled(app, { url: '/report' })
  t.equal(profile.collected.cpu, undefined, 'no CPU panel')
  t.equal(processSampler.started, 0, 'no CPU profile started')
  t.notOk(processSampler.connected, 'no inspector session opened')
})

t.test('X-Kernel-Profile: cpu: a CPU panel with a flame graph naming the handler\'s function; the .cpuprofile download parses', async (t) => {
  const app = await appWithReport()
  t.teardown(() => app.close())
  const { res, profile, token } = await profiled(app, { url: '/report', headers: { 'x-kernel-profile': 'cpu' } })
  t.equal(res.statusCode, 200)
  t.ok(processSampler.connected, 'the session opened with the first profile')
  for (const [name, value] of Object.entries(res.headers)) {
    t.notMatch(name, /kernel-profile/i, 'the header is not echoed')
    t.notMatch(String(value), /^cpu$/, `${name} does not echo it`)
  }
  const cpu = profile.collected.cpu!
  t.equal(cpu.asked, 'header')
  t.equal(cpu.intervalUs, 100)
  t.ok(cpu.profile !== undefined && cpu.profile.nodes.length > 0 && cpu.profile.samples!.length > 0, 'V8\'s profile is kept raw')
  t.ok(cpu.profile!.nodes.some(burning), 'the burning function was sampled')

  const panel = (await page(app, `/_profiler/${token}?panel=cpu`)).body
  t.match(panel, /<svg class="flame-graph" id="cpu-flame-svg" viewBox="0 0 1000 \d+"/, 'a flame graph')
  t.match(panel, /<title>(?:burnCpuForReport|reportHandler) — test\/profiler\/cpu\.test\.ts:\d+\nself [\d.]+ ms/, 'the function\'s frame, with its file and its times')
  t.match(panel, /<g data-kind="dependency" data-i="\d+" data-p="\d+" data-d="\d+" data-x="[\d.]+" data-w="[\d.]+" data-name="[^"]+"><title>[^<]+ — node_modules\/fastify\//, 'Fastify\'s frames are node_modules\', each with its place in the call tree (the page\'s script zooms with it)')
  t.match(panel, /<td class="mono">(?:burnCpuForReport|reportHandler)<\/td><td class="mono">test\/profiler\/cpu\.test\.ts:\d+ <span class="flag flag-info cpu-kind-app">app<\/span>/, 'the functions table: the application\'s function, with its self time first')
  t.match(panel, 'The samples are the <b>process\'s</b>, not this request\'s alone', 'the panel says the samples are the process\'s')
  t.match(panel, /V8 sampled every 100 µs/, 'and the sampling interval')
  t.match(panel, `<a href="/_profiler/${token}/cpuprofile" id="cpu-download" download>`)
  t.match(panel, /data-panel="cpu"[^>]*><span>CPU profile<\/span><span class="badge badge-info">\d+ ms<\/span>/, 'in the menu, with the time sampled')

  const download = await page(app, `/_profiler/${token}/cpuprofile`)
  t.equal(download.statusCode, 200)
  t.equal(download.headers['content-disposition'], `attachment; filename="${token}.cpuprofile"`)
  t.match(download.headers['content-type'], /^application\/json/)
  t.equal(download.headers['cache-control'], 'no-store')
  const parsed = JSON.parse(download.body) as CpuProfile
  t.ok(Array.isArray(parsed.nodes) && Array.isArray(parsed.samples) && Array.isArray(parsed.timeDeltas), 'nodes, samples and timeDeltas: what DevTools and speedscope read')
  t.equal(parsed.samples!.length, parsed.timeDeltas!.length)
  t.ok(parsed.endTime > parsed.startTime)
  t.ok(parsed.nodes.every((node) => typeof node.id === 'number' && typeof node.callFrame.functionName === 'string'))

  const toolbar = (await page(app, `/_wdt/${token}`)).body
  t.match(toolbar, new RegExp(`data-kwdt="cpu">\\s*<a class="kwdt-main" href="/_profiler/${token}\\?panel&#x3D;cpu"><span class="kwdt-label">CPU</span> <b data-kwdt-cpu>\\d+\\.\\d\\d</b>`), 'a toolbar item links the panel')

  // the download of a profile without one, and of no profile, are 404s
  const plain = await profiled(app, { url: '/report' })
  t.equal((await page(app, `/_profiler/${plain.token}/cpuprofile`)).statusCode, 404)
  t.equal((await page(app, '/_profiler/nothin/cpuprofile')).statusCode, 404)
  t.equal((await page(app, `/_profiler/${plain.token}?panel=cpu`)).statusCode, 404, 'no CPU panel on a request that did not ask')
})

t.test('over a real socket too; a value other than cpu asks for nothing', async (t) => {
  const app = await appWithReport()
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const asked = await fetch(`${base}/report`, { headers: { 'X-Kernel-Profile': 'memory, CPU' } })
  t.equal(asked.status, 200)
  const profile = await app.kernelProfiler.profileOf(asked)
  t.ok(profile.collected.cpu?.profile?.nodes.some(burning), 'a list naming cpu, in any case')
  const other = await fetch(`${base}/report`, { headers: { 'X-Kernel-Profile': 'memory' } })
  t.equal((await app.kernelProfiler.profileOf(other)).collected.cpu, undefined)
})

t.test('one CPU profile at a time: a concurrent request asking is not CPU-profiled, its profile says why, and nothing fails', async (t) => {
  let firstInside!: () => void
  const inside = new Promise<void>((resolve) => { firstInside = resolve })
  let releaseFirst!: () => void
  const released = new Promise<void>((resolve) => { releaseFirst = resolve })
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/report', async function reportHandler () { return { value: burnCpuForReport(BURN_ROUNDS) > 0 } })
    app.get('/slow', async function slowHandler () {
      burnCpuForReport(BURN_ROUNDS / 4)
      firstInside()
      await released
      return 'slow'
    })
    app.get('/quick', async function quickHandler () {
      releaseFirst()
      return 'quick'
    })
  })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const headers = { 'X-Kernel-Profile': 'cpu' }
  const first = fetch(`${base}/slow`, { headers })
  await inside
  const second = await fetch(`${base}/quick`, { headers })
  const firstResponse = await first
  t.equal(firstResponse.status, 200)
  t.equal(second.status, 200, 'the second request is answered as usual')
  const firstProfile = await app.kernelProfiler.profileOf(firstResponse)
  const secondProfile = await app.kernelProfiler.profileOf(second)
  t.ok(firstProfile.collected.cpu?.profile !== undefined, 'the first one is CPU-profiled')
  const refused = secondProfile.collected.cpu!
  t.equal(refused.profile, undefined, 'the second is not')
  t.equal(refused.busyWith, firstProfile.token)
  t.equal(refused.missing, `another request's CPU profile was running (${firstProfile.token})`)
  const panel = (await page(app, `/_profiler/${secondProfile.token}?panel=cpu`)).body
  t.match(panel, `none was taken: another request&#x27;s CPU profile was running (${firstProfile.token})`)
  t.match(panel, `One CPU profile runs at a time in a process: <a href="/_profiler/${firstProfile.token}?panel&#x3D;cpu">that request's profile</a>`)
  t.match(panel, /class="badge badge-warning">none</, 'flagged in the menu')
  // the first one's samples hold the second request's work too: the panel says the samples are the process's
  t.match((await page(app, `/_profiler/${firstProfile.token}?panel=cpu`)).body, 'The samples are the <b>process\'s</b>')
  // and the profiler is free again
  const after = await fetch(`${base}/report`, { headers })
  t.ok((await app.kernelProfiler.profileOf(after)).collected.cpu?.profile !== undefined, 'the next request asking is profiled')
})

t.test('production: the header does nothing at all', async (t) => {
  const app = await appWithReport({ debug: false })
  t.teardown(() => app.close())
  const started = processSampler.started
  const asked = await app.inject({ url: '/report', headers: { host, 'x-kernel-profile': 'cpu' } })
  const plain = await app.inject({ url: '/report', headers: { host } })
  t.equal(asked.statusCode, 200)
  t.equal(asked.headers['x-debug-token'], undefined)
  t.same(asked.headers, plain.headers, 'the same headers as without it')
  t.equal(asked.body, plain.body)
  t.equal(processSampler.started, started, 'no CPU profile started')
  const download = await app.inject({ url: '/_profiler/abcdef/cpuprofile', headers: { host } })
  t.equal(download.statusCode, 404)
  const arm = await app.inject({ method: 'POST', url: '/_profiler/cpu/next', headers: { host } })
  t.equal(arm.statusCode, 404)
  t.equal(arm.headers['set-cookie'], undefined)
})

t.test('clients the profiler does not admit get nothing: outside the allowed networks, or through an untrusted proxy', async (t) => {
  const narrow = await appWithReport({ debug: true, profiler: { allowedNetworks: ['10.0.0.0/8'] } })
  t.teardown(() => narrow.close())
  const started = processSampler.started
  const outside = await profiled(narrow, { url: '/report', headers: { 'x-kernel-profile': 'cpu' } })
  t.equal(outside.profile.collected.cpu, undefined, 'a client outside allowedNetworks: no CPU profile')
  t.equal((await narrow.inject({ url: `/_profiler/${outside.token}/cpuprofile`, headers: { host } })).statusCode, 404)
  const arm = await narrow.inject({ method: 'POST', url: '/_profiler/cpu/next', headers: { host } })
  t.equal(arm.statusCode, 404, 'nor can it arm the next request')
  t.equal(arm.headers['set-cookie'], undefined)

  const app = await appWithReport()
  t.teardown(() => app.close())
  const proxied = await profiled(app, { url: '/report', headers: { 'x-kernel-profile': 'cpu', 'x-forwarded-for': '203.0.113.9' } })
  t.equal(proxied.profile.collected.cpu, undefined, 'through a proxy Fastify does not trust: no CPU profile')
  const publicHost = await app.inject({ url: '/report', headers: { host: 'shop.example.com', 'x-kernel-profile': 'cpu' } })
  t.equal((await app.kernelProfiler.profileOf(publicHost)).collected.cpu, undefined, 'a local peer naming a public host (a proxy without headers): none')
  t.equal(processSampler.started, started, 'no CPU profile started')
})

t.test('"profile the next request": a same-origin POST arms this browser; its next request of its own is profiled, once', async (t) => {
  const clock = new ManualClock()
  const app = await appWithReport({ debug: true, clock })
  t.teardown(() => app.close())

  const crossSite = await app.inject({ method: 'POST', url: '/_profiler/cpu/next', headers: { host, 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' } })
  t.equal(crossSite.statusCode, 403, 'another site cannot arm it')
  t.equal(crossSite.headers['set-cookie'], undefined)
  const otherOrigin = await app.inject({ method: 'POST', url: '/_profiler/cpu/next', headers: { host, origin: 'http://evil.test' } })
  t.equal(otherOrigin.statusCode, 403, 'an Origin of another site either')
  t.equal((await app.inject({ method: 'GET', url: '/_profiler/cpu/next', headers: { host } })).statusCode, 404, 'a GET arms nothing')

  const arm = await app.inject({ method: 'POST', url: '/_profiler/cpu/next', headers: { host, origin: `http://${host}`, 'sec-fetch-site': 'same-origin' } })
  t.equal(arm.statusCode, 204)
  t.equal(arm.headers['cache-control'], 'no-store')
  const setCookie = String(arm.headers['set-cookie'])
  t.match(setCookie, new RegExp(`^${ARM_COOKIE}=[A-Za-z0-9_-]{22}; Max-Age=600; Path=/; HttpOnly; SameSite=Strict$`))
  const cookie = setCookie.split(';')[0]
  t.equal(arm.headers['x-debug-token'], undefined, 'a profiler route: not profiled')

  // the toolbar of any page of this browser shows it armed
  const before = await profiled(app, { url: '/page' })
  t.equal(before.profile.collected.cpu, undefined, 'another browser (no cookie) is not profiled')
  t.match((await page(app, `/_wdt/${before.token}`, { cookie })).body, /data-kwdt="cpu-next" data-kwdt-armed>\s*<button class="kwdt-main kwdt-button" type="button" data-kwdt-cpu-next="\/_profiler\/cpu\/next" aria-pressed="true"/)
  t.match((await page(app, `/_wdt/${before.token}`)).body, /data-kwdt="cpu-next">\s*<button[^>]+aria-pressed="false"[^>]*>Profile the next request</)

  // the browser's own requests are skipped: a stylesheet, a favicon, an image
  const asset = await profiled(app, { url: '/style.css', headers: { cookie } })
  t.equal(asset.profile.collected.cpu, undefined, 'a stylesheet is not the next request')
  const image = await profiled(app, { url: '/page', headers: { cookie, 'sec-fetch-dest': 'image' } })
  t.equal(image.profile.collected.cpu, undefined, 'nor what the browser loads as an image')
  t.equal(asset.res.headers['set-cookie'], undefined, 'and they leave it armed')

  const next = await profiled(app, { url: '/report', headers: { cookie, 'sec-fetch-dest': 'document' } })
  const cpu = next.profile.collected.cpu!
  t.equal(cpu.asked, 'toolbar')
  t.ok(cpu.profile?.nodes.some(burning), 'the next page is CPU-profiled')
  t.match(String(next.res.headers['set-cookie']), new RegExp(`^${ARM_COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict$`), 'its response clears the cookie')
  t.match((await page(app, `/_profiler/${next.token}?panel=cpu`)).body, 'asked by the toolbar\'s "profile the next request"')
  const again = await profiled(app, { url: '/report', headers: { cookie } })
  t.equal(again.profile.collected.cpu, undefined, 'used once: the same cookie again asks for nothing')
  t.match((await page(app, `/_wdt/${again.token}`, { cookie })).body, /aria-pressed="false"/, 'the button is no longer armed')

  // an armed browser that sends no request for ten minutes is forgotten
  const late = String((await app.inject({ method: 'POST', url: '/_profiler/cpu/next', headers: { host } })).headers['set-cookie']).split(';')[0]
  clock.advance(ARM_TTL_MS + 1)
  t.equal((await profiled(app, { url: '/report', headers: { cookie: late } })).profile.collected.cpu, undefined, 'expired')
})

t.test('what the profile names (a script\'s path) is escaped in the flame graph and the table', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kernel-cpu-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const file = join(dir, '<img src=x onerror=alert(1)>.mjs')
  writeFileSync(file, 'export function escapedBurner (rounds) { let sum = 0; for (let i = 0; i < rounds; i++) sum += Math.sqrt(i) * Math.tan(i); return sum }\n')
  const { escapedBurner } = await import(pathToFileURL(file).href) as { escapedBurner: (rounds: number) => number }
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/named', async () => ({ value: escapedBurner(BURN_ROUNDS) !== 0 }))
  })
  t.teardown(() => app.close())
  const { profile, token } = await profiled(app, { url: '/named', headers: { 'x-kernel-profile': 'cpu' } })
  t.ok(profile.collected.cpu!.profile!.nodes.some((node) => node.callFrame.functionName === 'escapedBurner'), 'sampled')
  const panel = (await page(app, `/_profiler/${token}?panel=cpu`)).body
  t.notMatch(panel, '<img src=x')
  t.match(panel, /<title>escapedBurner — [^<]*&lt;img src&#x3D;x onerror&#x3D;alert\(1\)&gt;\.mjs:1\n/, 'in the flame graph')
  t.match(panel, /<td class="mono">escapedBurner<\/td><td class="mono">[^<]*&lt;img src&#x3D;x onerror&#x3D;alert\(1\)&gt;\.mjs:1 /, 'in the table')
})

t.test('a function of compiled code is shown at its TypeScript source line', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kernel-cpu-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const source = [
    '// an app module, compiled by tsc',
    'interface Totals {',
    '  sum: number',
    '}',
    '',
    '',
    'export function compiledBurner (rounds: number): Totals {',
    '  let sum = 0',
    '  for (let i = 0; i < rounds; i++) sum += Math.sqrt(i) * Math.cos(i)',
    '  return { sum }',
    '}'
  ].join('\n')
  const compiled = ts.transpileModule(source, { fileName: join(dir, 'burner.ts'), compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, inlineSourceMap: true, inlineSources: true } })
  const file = join(dir, 'burner.mjs')
  writeFileSync(file, compiled.outputText)
  t.not(compiled.outputText.split('\n').findIndex((line) => line.includes('function compiledBurner')) + 1, 7, 'the compiled function is on another line')
  const { compiledBurner } = await import(pathToFileURL(file).href) as { compiledBurner: (rounds: number) => { sum: number } }
  const app = await buildApp({ debug: true }, {}, (app) => { app.get('/compiled', async () => compiledBurner(BURN_ROUNDS)) })
  t.teardown(() => app.close())
  const { token } = await profiled(app, { url: '/compiled', headers: { 'x-kernel-profile': 'cpu' } })
  const panel = (await page(app, `/_profiler/${token}?panel=cpu`)).body
  t.match(panel, /<td class="mono">compiledBurner<\/td><td class="mono">[^<]*burner\.ts:7 <span class="flag flag-info cpu-kind-app">app<\/span>/, 'the TypeScript file and line')
})
