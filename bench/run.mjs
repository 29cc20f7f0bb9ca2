// npm run bench — bare Fastify vs fastify-kernel, same routes, same load generator, same run.
// Each server runs in its own process; autocannon runs here. Prints req/s and p99 as ratios to
// bare Fastify measured in the same run, and the server's CPU per request (all its threads).
// BENCH_DURATION (seconds, default 10), BENCH_CONNECTIONS (50), BENCH_ONLY (comma-separated row
// names: bare, page, node:http, the servers' names, import, spans, storage, soak, security), BENCH_NODES
// (the Node lines every server runs on, default `24,20`: bench/node-lines.mjs; the bench itself
// runs on the first).
// Rows: node:http (the floor of any framework), the OpenTelemetry peer (SDK, instrumentation-http,
// @fastify/otel, every span exported), production, debug, the profiler at full capture
// (saveBudget 1: every request profiled) with memory, file and Redis storage and the count of
// profiles stored against requests served, without the spans' origins (their cost per span), and
// at the default budget (the default storage, file; and memory). Then: profiles written per
// second by each storage (bench/storage-throughput.mjs), the cost per recorded span and its
// floor (bare Fastify with an AsyncLocalStorage), what the spans' origins cost (bench/origin-cost.mjs),
// the import cost, RSS over a soak of full-capture
// load (BENCH_SOAK seconds, default 30: RSS at the start, once the storage is full, at the end;
// 600 for the issue's ten minutes), and the security section (bench/security.mjs).
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { createServer as createHttpServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { securityBench } from './security.mjs'
import { importCost } from './import-cost.mjs'
import { spanCost } from './span-cost.mjs'
import { originCost } from './origin-cost.mjs'
import { storageThroughput } from './storage-throughput.mjs'
import { alsFloor } from './als-floor.mjs'
import { pinLoadGenerator, pinning, serverFigures, startServer, stopServer } from './server-process.mjs'
import { nodeBinary, nodeLines, runningLine } from './node-lines.mjs'

// the bench runs on the first of its Node lines (BENCH_NODES; the in-process sections, the soak
// and the load generator with it), and each server once on every line
if (runningLine !== nodeLines[0]) {
  const { status } = spawnSync(nodeBinary(nodeLines[0]), [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' })
  process.exit(status ?? 1)
}
const binaries = Object.fromEntries(nodeLines.map((line) => [line, nodeBinary(line)]))

const duration = Number(process.env.BENCH_DURATION ?? 10)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)
const only = process.env.BENCH_ONLY // comma-separated server names, for a quick look
const soak = Number(process.env.BENCH_SOAK ?? 30)
// requests a second of the per-span rows (BENCH_IO_RATE): below what the slowest server serves
const ioRate = Number(process.env.BENCH_IO_RATE ?? 300)
pinLoadGenerator()
const wanted = (name) => only === undefined || only.split(',').includes(name)
// the file storage writes to a folder of its own, removed at the end
const profileDir = mkdtempSync(join(tmpdir(), 'bench-profiler-'))
const defaultDir = mkdtempSync(join(tmpdir(), 'bench-profiler-default-'))
process.on('exit', () => { for (const dir of [profileDir, defaultDir]) rmSync(dir, { recursive: true, force: true }) })

const requests = {
  matched: { method: 'GET', path: '/hello/world' },
  'not found': { method: 'GET', path: '/robots.txt' },
  'wrong method': { method: 'DELETE', path: '/hello/world' },
  // 10 Redis commands and one fetch (bench/server.mjs): 11 spans when profiled
  io: { method: 'GET', path: '/io' },
  // the per-span cost compares servers on these two at one request rate that all of them
  // sustain: at their own top rates, a slower server's Redis client and sockets batch less (one
  // write and one wake-up per command instead of several), which costs CPU that is no span's
  'matched at a fixed rate': { method: 'GET', path: '/hello/world', rate: ioRate },
  'io at a fixed rate': { method: 'GET', path: '/io', rate: ioRate }
}
const IO_SPANS = 11

const FULL = { debug: true, profiler: { storage: 'memory', saveBudget: 1 } }
const servers = [
  { name: 'node:http', kind: 'http', options: {}, scenarios: ['matched', 'not found'] },
  { name: 'bare Fastify', kind: 'bare', options: {}, scenarios: ['matched', 'not found', 'wrong method', 'matched at a fixed rate', 'io at a fixed rate'] },
  // the floor of the kernel's exact 404: Fastify's own not-found handler sending the kernel's production page
  { name: 'bare Fastify + the kernel\'s 404 page', kind: 'page', options: {}, scenarios: ['not found'] },
  // the floor of the profiler's request tracking: bare Fastify, each request in an AsyncLocalStorage
  // (its matched row first: a fixed rate alone is too few requests to warm the JIT)
  { name: 'bare Fastify + AsyncLocalStorage', kind: 'als', options: {}, scenarios: ['matched', 'matched at a fixed rate', 'io at a fixed rate'] },
  // the peer a user would pick instead: OpenTelemetry's SDK, instrumentation-http and
  // @fastify/otel, every span exported (bench/otel-preload.mjs)
  { name: 'OpenTelemetry peer', kind: 'otel', options: {}, scenarios: ['matched', 'not found'] },
  { name: 'kernel prod', kind: 'kernel', options: { debug: false }, scenarios: ['matched', 'not found', 'wrong method', 'matched at a fixed rate', 'io at a fixed rate'] },
  { name: 'kernel debug', kind: 'kernel', options: { debug: true, profiler: false }, scenarios: ['matched', 'not found', 'wrong method'] },
  // every request profiled and stored (count stored = count served): the memory bound
  { name: 'full capture (memory)', kind: 'kernel', options: FULL, scenarios: ['matched', 'not found', 'matched at a fixed rate', 'io at a fixed rate'], needsProfiler: true },
  // the same without the spans' origins (profiler.origins: false): what capturing where each call was made costs
  // (its matched row first, as for the AsyncLocalStorage row: a fixed rate alone does not warm the JIT)
  { name: 'full capture without origins (memory)', kind: 'kernel', options: { ...FULL, profiler: { ...FULL.profiler, origins: false } }, scenarios: ['matched', 'matched at a fixed rate', 'io at a fixed rate'], needsProfiler: true },
  { name: 'full capture (file)', kind: 'kernel', options: { ...FULL, profiler: { storage: 'file', directory: profileDir, saveBudget: 1 } }, scenarios: ['matched'], needsProfiler: true },
  { name: 'full capture (redis)', kind: 'kernel', options: { ...FULL, profiler: { storage: 'redis', saveBudget: 1 } }, scenarios: ['matched'], needsProfiler: true, redis: true },
  // the default save budget: what a load test costs a developer who changed nothing (the
  // default storage, the file storage, in a folder of the run's own), and with the memory storage
  { name: 'default budget (file: the default)', kind: 'kernel', options: { debug: true, profiler: { directory: defaultDir } }, scenarios: ['matched'], needsProfiler: true },
  { name: 'default budget (memory)', kind: 'kernel', options: { debug: true, profiler: { storage: 'memory' } }, scenarios: ['matched'], needsProfiler: true }
]

/**
 * The Redis storage's server: Debian's redis-server on a free port with its own temporary folder
 * and no persistence, started only when a Redis row runs, stopped by its PID at the end.
 */
async function startRedis () {
  const probe = createServer().listen(0, '127.0.0.1')
  await once(probe, 'listening')
  const port = probe.address().port
  await new Promise((resolve) => probe.close(resolve))
  const dir = mkdtempSync(join(tmpdir(), 'bench-redis-'))
  const child = spawn(process.env.REDIS_SERVER_PATH ?? '/usr/bin/redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  process.on('exit', () => { if (child.exitCode === null) child.kill('SIGTERM') }) // a bench that fails stops it too
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null || attempt > 200) throw new Error('redis-server did not start')
    const up = await new Promise((resolve) => { const socket = connect(port, '127.0.0.1', () => { socket.end(); resolve(true) }); socket.on('error', () => resolve(false)) })
    if (up) break
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop () {
      if (child.exitCode === null) { child.kill('SIGTERM'); await once(child, 'exit') }
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
let redis

/**
 * What the I/O route calls: the Redis above and a local HTTP server in this process (not the
 * bench server's), started once, for every server (the environment of the forked processes).
 */
async function startIoServers () {
  redis ??= await startRedis()
  const upstream = createHttpServer((_request, response) => { response.end('upstream') })
  upstream.listen(0, '127.0.0.1')
  await once(upstream, 'listening')
  process.env.BENCH_IO_REDIS_URL = redis.url
  process.env.BENCH_IO_UPSTREAM_URL = `http://127.0.0.1:${upstream.address().port}/`
  return upstream
}
const ioUpstream = only === undefined || only.split(',').some((name) => !['import', 'security', 'spans', 'storage', 'soak'].includes(name)) ? await startIoServers() : undefined

function load (port, request, seconds) {
  const { rate, ...sent } = request
  return autocannon({ url: `http://127.0.0.1:${port}`, connections, duration: seconds, pipelining: 1, ...(rate === undefined ? {} : { overallRate: rate }), requests: [{ ...sent, headers: { accept: 'text/html' } }] })
}

// first, on a machine no server loads yet
const importReport = wanted('import') ? importCost().report : undefined

const results = []
// each server on each line in turn, so that both lines meet the machine as it is at that moment
const runs = servers.flatMap((server) => nodeLines.map((node) => ({ server, node })))
for (const { server, node } of runs) {
  if (!wanted(server.kind === 'bare' || server.kind === 'page' ? server.kind : server.name)) continue
  let started
  try {
    if (server.redis) {
      redis ??= await startRedis()
      server.options.profiler.redisUrl = redis.url
    }
    started = await startServer(server.kind, server.options, server.name, true, binaries[node])
  } catch (error) {
    console.error(`skipped ${server.name} on Node ${node}: ${error.message}`)
    continue
  }
  const { child, port } = started
  for (const scenario of server.scenarios ?? Object.keys(requests)) {
    await load(port, requests[scenario], 2) // warm-up: JIT, caches
    // settled: the warm-up's profiles are stored, so that the counts below are this run's
    const before = await serverFigures(child, true)
    const result = await load(port, requests[scenario], duration)
    const after = await serverFigures(child, true)
    const statuses = Object.entries(result.statusCodeStats ?? {}).map(([code]) => code).join('/')
    const served = after.served - before.served
    // server CPU per request: on a 2-core machine shared with the load generator it is steadier than req/s
    const cpuPerRequest = (after.cpu - before.cpu) / Math.max(1, served)
    const saved = after.saved === null ? null : { stored: after.saved - before.saved, dropped: after.dropped - before.dropped, kept: after.profiles }
    const exported = after.exported === null ? null : after.exported - before.exported
    results.push({ node, server: server.name, scenario, rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.timeouts, statuses, served, rssBefore: before.rss, rssAfter: after.rss, cpuPerRequest, saved, exported })
    process.stderr.write(`Node ${node} ${server.name} ${scenario}: ${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms, status ${statuses}, ${cpuPerRequest.toFixed(1)} µs/req${saved === null ? '' : `, ${saved.stored} stored of ${served} served, ${saved.dropped} dropped`}${exported === null ? '' : `, ${exported} spans exported`}\n`)
  }
  await stopServer(child)
}

// the floor of the per-span cost, while the I/O route's Redis and upstream still run
const floorReport = wanted('spans') && ioUpstream !== undefined ? await alsFloor(redis.url, process.env.BENCH_IO_UPSTREAM_URL) : undefined
// the spans' origins in a whole request, in one process (no load generator competing)
let originReport
if (wanted('spans')) {
  redis ??= await startRedis()
  originReport = await originCost(redis.url)
}
// in-process, and here rather than when printing: a failure shows before the long soak
const spanReport = wanted('spans') ? spanCost() : undefined
let storageReport
if (wanted('storage')) {
  redis ??= await startRedis()
  storageReport = await storageThroughput(redis.url)
}
await redis?.stop()
ioUpstream?.close()
delete process.env.BENCH_IO_REDIS_URL
delete process.env.BENCH_IO_UPSTREAM_URL

const soakReport = soak > 0 && wanted('soak') ? await soakFullCapture(soak) : undefined
const securityReport = wanted('security') ? await securityBench(duration) : undefined

/**
 * Full capture under sustained load (the memory bound): the memory storage at its default
 * bounds, the matched route for `seconds`; RSS before the load, once the storage holds its
 * `maxProfiles` (from then on every new profile evicts the oldest), and at the end.
 */
async function soakFullCapture (seconds) {
  const { child, port } = await startServer('kernel', FULL, 'soak', true, binaries[nodeLines[0]])
  const start = await serverFigures(child)
  const run = load(port, requests.matched, seconds)
  const samples = []
  let bound
  const timer = setInterval(async () => {
    const figures = await serverFigures(child)
    samples.push(figures)
    if (bound === undefined && figures.profiles >= 2000) bound = figures
  }, 1000)
  const result = await run
  clearInterval(timer)
  const end = await serverFigures(child, true)
  await stopServer(child)
  const mb = (bytes) => (bytes / 1048576).toFixed(1)
  const afterBound = bound === undefined ? [] : samples.filter((s) => s.served >= bound.served)
  const percent = (rss) => `${rss >= bound.rss ? '+' : ''}${(((rss - bound.rss) / bound.rss) * 100).toFixed(1)}%`
  const low = Math.min(...afterBound.map((s) => s.rss), end.rss)
  const high = Math.max(...afterBound.map((s) => s.rss), end.rss)
  const change = bound === undefined ? 'the bound was not reached' : `end ${percent(end.rss)} of the RSS at the bound; sampled every second after it: ${mb(low)} to ${mb(high)} MB (${percent(low)} / ${percent(high)}; target within ±20 %)`
  return [
    `Soak: full capture (every request profiled, memory storage, at most 2000 profiles), matched route, ${seconds} s, ${Math.round(result.requests.average)} req/s, ${end.served} requests served, ${end.saved} profiles stored, ${end.dropped} dropped`,
    `RSS at the start ${mb(start.rss)} MB, once the storage was full ${bound === undefined ? '—' : mb(bound.rss)} MB (after ${bound?.served ?? '—'} requests), at the end ${mb(end.rss)} MB: ${change}; heap used at the end ${mb(end.heapUsed)} MB`
  ].join('\n')
}

const bare = Object.fromEntries(results.filter((r) => r.server === 'bare Fastify').map((r) => [`${r.node} ${r.scenario}`, r]))
const mb = (bytes) => (bytes / 1048576).toFixed(0)
const where = pinning === undefined ? 'servers and load generator unpinned' : `servers pinned to core ${pinning.server}, the load generator to ${pinning.loadGenerator}`
const versions = nodeLines.map((line) => spawnSync(binaries[line], ['--version'], { encoding: 'utf8' }).stdout.trim()).join(' and ')
console.log(`\n${duration} s per run, ${connections} connections, servers on Node ${versions} (the ratios against bare Fastify on the same line), the bench on Node ${process.version}, ${where}, ${new Date().toISOString().slice(0, 10)}\n`)
console.log('| Node | server | request | req/s | ratio to bare | p99 ms | p99 ratio | server CPU µs/req | CPU ratio (bare ÷ this) | RSS before → after (MB) | profiles stored / served (dropped), or spans exported |')
console.log('|---|---|---|---:|---:|---:|---:|---:|---:|---|---|')
for (const r of [...results].sort((a, b) => nodeLines.indexOf(a.node) - nodeLines.indexOf(b.node))) {
  const base = bare[`${r.node} ${r.scenario}`]
  const ratio = base ? (r.rps / base.rps).toFixed(2) : '—'
  const p99Ratio = base && base.p99 > 0 ? (r.p99 / base.p99).toFixed(2) : '—'
  const cpuRatio = base ? (base.cpuPerRequest / r.cpuPerRequest).toFixed(2) : '—'
  const saved = r.saved !== null ? `${r.saved.stored} / ${r.served} (${r.saved.dropped})` : r.exported !== null ? `${r.exported} spans (${(r.exported / Math.max(1, r.served)).toFixed(1)} a request)` : ''
  console.log(`| ${r.node} | ${r.server} | ${r.scenario} (${r.statuses}) | ${Math.round(r.rps)} | ${ratio} | ${r.p99} | ${p99Ratio} | ${r.cpuPerRequest.toFixed(1)} | ${cpuRatio} | ${mb(r.rssBefore)} → ${mb(r.rssAfter)} | ${saved} |`)
}
for (const node of nodeLines) {
  const ioReport = ioSpanCost(node)
  if (ioReport !== undefined) console.log(`\n${ioReport}`)
}
if (floorReport !== undefined) console.log(`\n${floorReport}`)
if (spanReport !== undefined) console.log(`\n${spanReport}`)
if (originReport !== undefined) console.log(`\n${originReport}`)
if (storageReport !== undefined) console.log(`\n${storageReport}`)
if (importReport !== undefined) console.log(`\n${importReport}`)
if (soakReport !== undefined) console.log(`\n${soakReport}`)
if (securityReport !== undefined) console.log(`\n${securityReport}`)

/**
 * The profiler's cost per recorded span: the server CPU the I/O route costs beyond the matched
 * route with every request profiled, less what the same calls cost beyond it in production,
 * divided by the route's 11 spans. It takes in everything the profiler adds to a call: the
 * libraries' tracing once subscribed, the channel handlers, the span, its share of building and
 * storing the profile, and the AsyncLocalStorage that attributes the call to its request. That
 * last part is Node's, not the kernel's: the floor is the same difference for bare Fastify with
 * an AsyncLocalStorage and no kernel.
 */
function ioSpanCost (node) {
  const cpu = (server, scenario) => results.find((r) => r.node === node && r.server === server && r.scenario === scenario)?.cpuPerRequest
  const extra = (server) => cpu(server, 'io at a fixed rate') - cpu(server, 'matched at a fixed rate')
  const servers = ['full capture (memory)', 'kernel prod', 'bare Fastify + AsyncLocalStorage', 'bare Fastify']
  if (servers.some((server) => Number.isNaN(extra(server)))) return undefined
  const [profiled, production, tracked, bare] = servers.map(extra)
  const perSpan = (profiled - production) / IO_SPANS
  const floor = (tracked - bare) / IO_SPANS
  // the matched route records no span: the I/O route alone, with and without origins
  const withOrigins = cpu('full capture (memory)', 'io at a fixed rate')
  const withoutOrigins = cpu('full capture without origins (memory)', 'io at a fixed rate')
  const origins = withoutOrigins === undefined
    ? []
    : [`- of which the spans' origins (a stack captured per span, resolved when the profile is built): ${((withOrigins - withoutOrigins) / IO_SPANS).toFixed(2)} µs per span = (the I/O route with origins, ${withOrigins.toFixed(1)} µs, less without, profiler.origins: false, ${withoutOrigins.toFixed(1)} µs) ÷ ${IO_SPANS}`]
  return [
    `Node ${node}: cost per recorded span (I/O route: 10 Redis commands and one fetch, ${IO_SPANS} spans; both routes at ${ioRate} req/s on every server), µs of server CPU (target ≤ 1 µs):`,
    `- the profiler at full capture: ${perSpan.toFixed(2)} µs per span = (what the I/O route costs beyond the matched route with every request profiled, ${profiled.toFixed(1)} µs, less the same in production, ${production.toFixed(1)} µs) ÷ ${IO_SPANS}`,
    `- its floor, no kernel: ${floor.toFixed(2)} µs per call = (bare Fastify with each request in an AsyncLocalStorage, ${tracked.toFixed(1)} µs, less bare Fastify, ${bare.toFixed(1)} µs) ÷ ${IO_SPANS}: Node ${node}'s AsyncLocalStorage on the calls' promises`,
    `- the kernel's own part: ${(perSpan - floor).toFixed(2)} µs per span`,
    ...origins
  ].join('\n')
}
