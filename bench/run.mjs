// npm run bench — bare Fastify vs fastify-kernel, same routes, same load generator, same run.
// Each server runs in its own process; autocannon runs here. Prints req/s and p99 as ratios to
// bare Fastify measured in the same run. BENCH_DURATION (seconds, default 10), BENCH_CONNECTIONS (50).
import { fork } from 'node:child_process'
import { once } from 'node:events'
import autocannon from 'autocannon'

const duration = Number(process.env.BENCH_DURATION ?? 10)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)
const only = process.env.BENCH_ONLY // comma-separated server names, for a quick look

const requests = {
  matched: { method: 'GET', path: '/hello/world' },
  'not found': { method: 'GET', path: '/robots.txt' },
  'wrong method': { method: 'DELETE', path: '/hello/world' }
}

const servers = [
  { name: 'bare Fastify', kind: 'bare', options: {} },
  { name: 'kernel prod', kind: 'kernel', options: { debug: false } },
  { name: 'kernel debug', kind: 'kernel', options: { debug: true, profiler: false } },
  { name: 'kernel debug + profiler (memory)', kind: 'kernel', options: { debug: true, profiler: { storage: 'memory' } }, scenarios: ['matched', 'not found'], needsProfiler: true },
  { name: 'kernel debug + profiler (file)', kind: 'kernel', options: { debug: true, profiler: { storage: 'file' } }, scenarios: ['matched', 'not found'], needsProfiler: true }
]

async function start (server) {
  const child = fork(new URL('./server.mjs', import.meta.url), [server.kind, JSON.stringify(server.options)], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
  const [chunk] = await Promise.race([once(child.stdout, 'data'), once(child, 'exit').then(() => { throw new Error(`${server.name} did not start`) })])
  return { child, port: Number(String(chunk).trim()) }
}

async function memory (child) {
  child.send('memory')
  const [message] = await once(child, 'message')
  return message
}

function load (port, request, seconds) {
  return autocannon({ url: `http://127.0.0.1:${port}`, connections, duration: seconds, pipelining: 1, requests: [{ ...request, headers: { accept: 'text/html' } }] })
}

const results = []
for (const server of servers) {
  if (only !== undefined && !only.split(',').includes(server.kind === 'bare' ? 'bare' : server.name)) continue
  let started
  try {
    started = await start(server)
  } catch (error) {
    console.error(`skipped ${server.name}: ${error.message}`)
    continue
  }
  const { child, port } = started
  for (const scenario of server.scenarios ?? Object.keys(requests)) {
    await load(port, requests[scenario], 2) // warm-up: JIT, caches
    const before = await memory(child)
    const result = await load(port, requests[scenario], duration)
    const after = await memory(child)
    const statuses = Object.entries(result.statusCodeStats ?? {}).map(([code]) => code).join('/')
    results.push({ server: server.name, scenario, rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.timeouts, statuses, rssBefore: before.rss, rssAfter: after.rss })
    process.stderr.write(`${server.name} ${scenario}: ${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms, status ${statuses}\n`)
  }
  child.kill('SIGTERM')
  await once(child, 'exit')
}

const bare = Object.fromEntries(results.filter((r) => r.server === 'bare Fastify').map((r) => [r.scenario, r]))
const mb = (bytes) => (bytes / 1048576).toFixed(0)
console.log(`\n${duration} s per run, ${connections} connections, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}\n`)
console.log('| server | request | req/s | ratio to bare | p99 ms | p99 ratio | RSS before → after (MB) |')
console.log('|---|---|---:|---:|---:|---:|---|')
for (const r of results) {
  const base = bare[r.scenario]
  const ratio = base ? (r.rps / base.rps).toFixed(2) : '—'
  const p99Ratio = base && base.p99 > 0 ? (r.p99 / base.p99).toFixed(2) : '—'
  console.log(`| ${r.server} | ${r.scenario} (${r.statuses}) | ${Math.round(r.rps)} | ${ratio} | ${r.p99} | ${p99Ratio} | ${mb(r.rssBefore)} → ${mb(r.rssAfter)} |`)
}
