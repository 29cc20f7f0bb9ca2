// What the capture guards (issue 34) cost the requests they do not profile, in one process: apps
// whose requests the sample leaves out (capture: { sample: 0.001 }, a draw that never falls),
// served through inject(), rounds alternated, the process's CPU per request (its threads: V8's
// collector included), medians. `guards off`: keepExceptions: false, maxEventLoopDelay: false;
// `guards on`: the defaults (an exception kept, the lag read at each request's start) with two
// excluded paths; `excluded path`: a request to one of them (no recording, no log capture).
// Then the guard calls alone on a left-out request, in ns (a tight loop, no Fastify). Run after
// `npm run build`: `node bench/guard-cost.mjs`.
import { createKernelApp } from '../dist/index.js'
import { CaptureGuards } from '../dist/src/profiler/guards/guards.js'
import { resolveCaptureGuards } from '../dist/src/profiler/guards/options.js'

const REQUESTS = 2000
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11)

async function app (guards) {
  const server = await createKernelApp({ kernel: { debug: true, profiler: { storage: 'memory', capture: { sample: 0.001 }, ...guards } } })
  server.get('/x', async () => ({ hello: 'world' }))
  server.get('/health', async () => ({ ok: true }))
  await server.ready()
  server.kernelProfiler.capture.random = () => 0.99
  return server
}

async function cpuPerRequest (server, url) {
  const start = process.cpuUsage()
  for (let sent = 0; sent < REQUESTS; sent += 10) {
    await Promise.all(Array.from({ length: 10 }, () => server.inject({ url, headers: { host: 'localhost' } })))
  }
  const used = process.cpuUsage(start)
  return (used.user + used.system) / REQUESTS
}

/** ns a left-out request spends in the guards (start, then a 200 at the response). */
function guardCallsNs () {
  const guards = new CaptureGuards(resolveCaptureGuards({ excludedPaths: ['/health', '/assets/*'] }))
  const request = { url: '/x?page=2', routeOptions: { config: {} } }
  const asked = () => false
  const state = {}
  const N = 2_000_000
  let kept = 0
  for (let round = 0; round < 2; round++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < N; i++) {
      if (!guards.admitsTarget(request.url)) kept++
      if (guards.skipsAtStart(request) || guards.pausedFor(asked)) kept++
      state.leftOut = true
      if (200 >= 500 && guards.keepsException(request, 200)) kept++
    }
    const ns = Number(process.hrtime.bigint() - start) / N
    if (round === 1) {
      guards.close()
      return { ns, kept }
    }
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const servers = {
  'guards off': [await app({ keepExceptions: false, maxEventLoopDelay: false }), '/x'],
  'guards on': [await app({ excludedPaths: ['/health', '/assets/*'] }), '/x'],
  'excluded path': [await app({ excludedPaths: ['/health', '/assets/*'] }), '/health']
}
try {
  for (const [server, url] of Object.values(servers)) await cpuPerRequest(server, url) // warm-up
  const figures = Object.fromEntries(Object.keys(servers).map((name) => [name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    const names = Object.keys(servers)
    if (round % 2 === 1) names.reverse()
    for (const name of names) figures[name].push(await cpuPerRequest(...servers[name]))
  }
  const calls = guardCallsNs()
  console.log(`Capture guards on a request the sample leaves out (one process, inject(), ${ROUNDS} alternated rounds of ${REQUESTS} requests, medians of the CPU per request): ` +
    Object.entries(figures).map(([name, values]) => `${name} ${median(values).toFixed(1)} µs`).join(', ') +
    ` (rounds, guards on − off: ${figures['guards on'].map((on, i) => (on - figures['guards off'][i]).toFixed(1)).join(', ')} µs); the guard calls alone: ${calls.ns.toFixed(0)} ns a request`)
} finally {
  for (const [server] of Object.values(servers)) await server.close()
}
