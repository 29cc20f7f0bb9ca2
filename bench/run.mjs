// npm run bench — bare Fastify vs fastify-kernel, same routes, same load generator, same run.
// Each server runs in its own process; autocannon runs here. Prints req/s and p99 as ratios to
// bare Fastify measured in the same run. BENCH_DURATION (seconds, default 10), BENCH_CONNECTIONS (50).
// Then the security section (bench/security.mjs): login throttling and bounded password checks
// under a brute force and a 64-client flood; BENCH_ONLY=security runs it alone.
// BENCH_SOAK=60: afterwards, load the profiler with file storage on the matched route for that
// many seconds and report RSS and heap at the start and the end, and the stored-profile count.
import { spawn } from 'node:child_process'
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
import { serverFigures, startServer, stopServer } from './server-process.mjs'

const duration = Number(process.env.BENCH_DURATION ?? 10)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)
const only = process.env.BENCH_ONLY // comma-separated server names, for a quick look
const soak = Number(process.env.BENCH_SOAK ?? 0)
// the file storage writes to a folder of its own, removed at the end
const profileDir = mkdtempSync(join(tmpdir(), 'bench-profiler-'))
process.on('exit', () => rmSync(profileDir, { recursive: true, force: true }))

const requests = {
  matched: { method: 'GET', path: '/hello/world' },
  'not found': { method: 'GET', path: '/robots.txt' },
  'wrong method': { method: 'DELETE', path: '/hello/world' },
  // 10 Redis commands and one fetch (bench/server.mjs): 11 spans when profiled
  io: { method: 'GET', path: '/io' }
}
const IO_SPANS = 11

const servers = [
  { name: 'bare Fastify', kind: 'bare', options: {} },
  { name: 'kernel prod', kind: 'kernel', options: { debug: false } },
  { name: 'kernel debug', kind: 'kernel', options: { debug: true, profiler: false }, scenarios: ['matched', 'not found', 'wrong method'] },
  { name: 'kernel debug + profiler (memory)', kind: 'kernel', options: { debug: true, profiler: { storage: 'memory' } }, scenarios: ['matched', 'not found'], needsProfiler: true },
  // every request profiled (no save budget): the I/O route's spans against the matched route's
  { name: 'kernel debug + profiler (every request)', kind: 'kernel', options: { debug: true, profiler: { storage: 'memory', saveBudget: 1 } }, scenarios: ['matched', 'io'], needsProfiler: true },
  { name: 'kernel debug + profiler (file)', kind: 'kernel', options: { debug: true, profiler: { storage: 'file', directory: profileDir } }, scenarios: ['matched', 'not found'], needsProfiler: true },
  { name: 'kernel debug + profiler (redis)', kind: 'kernel', options: { debug: true, profiler: { storage: 'redis' } }, scenarios: ['matched', 'not found'], needsProfiler: true, redis: true }
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
const ioUpstream = only === undefined || only.split(',').some((name) => !['import', 'security', 'spans'].includes(name)) ? await startIoServers() : undefined

function load (port, request, seconds) {
  return autocannon({ url: `http://127.0.0.1:${port}`, connections, duration: seconds, pipelining: 1, requests: [{ ...request, headers: { accept: 'text/html' } }] })
}

// first, on a machine no server loads yet
const importReport = only === undefined || only.split(',').includes('import') ? importCost().report : undefined

const results = []
for (const server of servers) {
  if (only !== undefined && !only.split(',').includes(server.kind === 'bare' ? 'bare' : server.name)) continue
  let started
  try {
    if (server.redis) {
      redis ??= await startRedis()
      server.options.profiler.redisUrl = redis.url
    }
    started = await startServer(server.kind, server.options, server.name)
  } catch (error) {
    console.error(`skipped ${server.name}: ${error.message}`)
    continue
  }
  const { child, port } = started
  for (const scenario of server.scenarios ?? Object.keys(requests)) {
    await load(port, requests[scenario], 2) // warm-up: JIT, caches
    const before = await serverFigures(child)
    const result = await load(port, requests[scenario], duration)
    const after = await serverFigures(child)
    const statuses = Object.entries(result.statusCodeStats ?? {}).map(([code]) => code).join('/')
    // server CPU per request: on a 2-core machine shared with the load generator it is steadier than req/s
    const cpuPerRequest = (after.cpu - before.cpu) / Math.max(1, result.requests.total)
    const saved = after.profiles === null ? null : { profiles: after.profiles, dropped: after.dropped - before.dropped }
    results.push({ server: server.name, scenario, rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.timeouts, statuses, rssBefore: before.rss, rssAfter: after.rss, cpuPerRequest, saved })
    process.stderr.write(`${server.name} ${scenario}: ${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms, status ${statuses}\n`)
  }
  await stopServer(child)
}

await redis?.stop()
ioUpstream?.close()

let soakReport
if (soak > 0) soakReport = await soakFileStorage(soak)
const securityReport = only === undefined || only.split(',').includes('security') ? await securityBench(duration) : undefined

/** The file-storage profiler under sustained load: memory at the start and the end, and the store's bounds. */
async function soakFileStorage (seconds) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-soak-'))
  // a bound small enough to be reached early in the run: the soak checks it holds
  const maxProfiles = 300
  const server = { name: 'soak', kind: 'kernel', options: { debug: true, profiler: { storage: 'file', directory: dir, maxProfiles } } }
  const { child, port } = await startServer(server.kind, server.options, server.name)
  await load(port, requests.matched, 5) // warm-up, and the store fills up past its bound
  const samples = [await serverFigures(child)]
  const run = load(port, requests.matched, seconds)
  const timer = setInterval(async () => { samples.push(await serverFigures(child)) }, 5000)
  const result = await run
  clearInterval(timer)
  samples.push(await serverFigures(child))
  await stopServer(child)
  rmSync(dir, { recursive: true, force: true })
  const first = samples[0]
  const last = samples.at(-1)
  const mb = (bytes) => (bytes / 1048576).toFixed(1)
  const change = (a, b) => `${(((b - a) / a) * 100).toFixed(1)}%`
  const maxRss = Math.max(...samples.map((s) => s.rss))
  const maxCount = Math.max(...samples.map((s) => s.profiles))
  const maxFiles = Math.max(...samples.map((s) => s.files ?? 0))
  return [
    `Soak: profiler with file storage, matched route, ${seconds} s, ${Math.round(result.requests.average)} req/s, ${result.requests.total} requests`,
    `RSS ${mb(first.rss)} → ${mb(last.rss)} MB (${change(first.rss, last.rss)}, peak ${mb(maxRss)}); heap used ${mb(first.heapUsed)} → ${mb(last.heapUsed)} MB (${change(first.heapUsed, last.heapUsed)})`,
    `stored profiles ≤ ${maxCount} (bound ${maxProfiles}), files on disk ≤ ${maxFiles}, saves dropped because the disk was behind: ${last.dropped}`
  ].join('\n')
}

const bare = Object.fromEntries(results.filter((r) => r.server === 'bare Fastify').map((r) => [r.scenario, r]))
const mb = (bytes) => (bytes / 1048576).toFixed(0)
console.log(`\n${duration} s per run, ${connections} connections, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}\n`)
console.log('| server | request | req/s | ratio to bare | p99 ms | p99 ratio | server CPU µs/req | CPU ratio (bare ÷ this) | RSS before → after (MB) | profiles stored / saves dropped |')
console.log('|---|---|---:|---:|---:|---:|---:|---:|---|---|')
for (const r of results) {
  const base = bare[r.scenario]
  const ratio = base ? (r.rps / base.rps).toFixed(2) : '—'
  const p99Ratio = base && base.p99 > 0 ? (r.p99 / base.p99).toFixed(2) : '—'
  const cpuRatio = base ? (base.cpuPerRequest / r.cpuPerRequest).toFixed(2) : '—'
  const saved = r.saved === null ? '' : `${r.saved.profiles} / ${r.saved.dropped}`
  console.log(`| ${r.server} | ${r.scenario} (${r.statuses}) | ${Math.round(r.rps)} | ${ratio} | ${r.p99} | ${p99Ratio} | ${r.cpuPerRequest.toFixed(1)} | ${cpuRatio} | ${mb(r.rssBefore)} → ${mb(r.rssAfter)} | ${saved} |`)
}
const ioReport = ioSpanCost()
if (ioReport !== undefined) console.log(`\n${ioReport}`)
if (only === undefined || only.split(',').includes('spans')) console.log(`\n${spanCost()}`)
if (importReport !== undefined) console.log(`\n${importReport}`)
if (soakReport !== undefined) console.log(`\n${soakReport}`)
if (securityReport !== undefined) console.log(`\n${securityReport}`)

/**
 * The profiler's main-thread cost per recorded span: the server CPU the I/O route costs beyond the
 * matched route with every request profiled, less what the same calls cost beyond it in
 * production, divided by the route's 11 spans. It takes in everything the profiler adds to a
 * call: the libraries' tracing once subscribed, the channel handlers, the span, and its share of
 * building, masking and storing the profile.
 */
function ioSpanCost () {
  const cpu = (server, scenario) => results.find((r) => r.server === server && r.scenario === scenario)?.cpuPerRequest
  const debugIo = cpu('kernel debug + profiler (every request)', 'io')
  const debugMatched = cpu('kernel debug + profiler (every request)', 'matched')
  const prodIo = cpu('kernel prod', 'io')
  const prodMatched = cpu('kernel prod', 'matched')
  if ([debugIo, debugMatched, prodIo, prodMatched].some((value) => value === undefined)) return undefined
  const perSpan = ((debugIo - debugMatched) - (prodIo - prodMatched)) / IO_SPANS
  return [
    `Profiler cost per recorded span (I/O route: 10 Redis commands and one fetch, ${IO_SPANS} spans): ${perSpan.toFixed(2)} µs of server CPU per span (target ≤ 1 µs, issue 20)`,
    `= ((profiled I/O ${debugIo.toFixed(1)} − profiled matched ${debugMatched.toFixed(1)}) − (production I/O ${prodIo.toFixed(1)} − production matched ${prodMatched.toFixed(1)})) ÷ ${IO_SPANS}, µs per request`
  ].join('\n')
}
