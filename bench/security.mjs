// The security section of `npm run bench`: login throttling and the password-check gate under
// the abuse a probe of the login ran, against a server with today's defaults and one without
// them ("unprotected": no throttling, no bound on concurrent checks). Every client is on this
// machine's loopback: the flood's 64 clients each bind an address of their own (127.0.0.2 to
// 127.0.0.65), so per-client limits see 64 clients, as from a botnet; the real user is 127.0.0.1.
// Not timed tests: figures, with the bounds the defaults promise checked and printed.
import http from 'node:http'
import autocannon from 'autocannon'
import { hashPassword } from '../dist/src/security/index.js'
import { pinLoadGenerator, serverFigures, startServer, stopServer } from './server-process.mjs'

const MIB = 1048576
const FLOOD_CLIENTS = 64
const REAL_LOGIN_EVERY_MS = 200

const basic = (username, password) => 'Basic ' + Buffer.from(`${username}:${password}`).toString('base64')

const start = (options) => startServer('kernel', options, 'the security bench server', false)

/** The server's resident memory, and the part of it outside the JS heap (where scrypt works). */
async function memory (child) {
  const { rss, heapTotal } = await serverFigures(child)
  return { rss, outsideHeap: rss - heapTotal }
}

/** One GET /hello/world with Basic credentials; resolves to its status and duration. */
function request (port, agent, authorization) {
  const started = performance.now()
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/hello/world', agent, headers: { authorization, accept: 'text/html' } }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - started }))
    })
    req.on('error', () => resolve({ status: 'error', ms: performance.now() - started }))
  })
}

function count (statuses) {
  const counts = {}
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1
  return Object.entries(counts).map(([status, n]) => `${status}×${n}`).join(' ')
}

function percentile (values, p) {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

/** One client guessing as fast as it can, a new user name each time (only the per-client limit applies). */
async function bruteForce (port, seconds) {
  let n = 0
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/hello/world`,
    connections: 16,
    duration: seconds,
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: basic(`guess-${n++}`, 'wrong') } }) }]
  })
  // 401: the guess was checked (wrong password); 429/503: refused before any check
  return { total: result.requests.total, checked: result.statusCodeStats?.['401']?.count ?? 0, statuses: Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => `${code}×${count}`).join(' ') }
}

/** 64 guessing clients, each from its own address, while the real user logs in every 200 ms. */
async function flood (server, seconds) {
  const { child, port } = server
  const idle = []
  const realAgent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress: '127.0.0.1' })
  for (let i = 0; i < 5; i++) idle.push((await request(port, realAgent, basic('admin', 'admin'))).ms)
  const before = await memory(child)
  const deadline = performance.now() + seconds * 1000
  const floodStatuses = []
  const guessers = Array.from({ length: FLOOD_CLIENTS }, async (_, i) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress: `127.0.0.${i + 2}` })
    for (let n = 0; performance.now() < deadline; n++) floodStatuses.push((await request(port, agent, basic(`flood-${i}-${n}`, 'wrong'))).status)
    agent.destroy()
  })
  const logins = []
  const realUser = (async () => {
    while (performance.now() < deadline) {
      logins.push(await request(port, realAgent, basic('admin', 'admin')))
      await new Promise((resolve) => setTimeout(resolve, REAL_LOGIN_EVERY_MS))
    }
  })()
  const peak = { ...before }
  const sample = async () => {
    const now = await memory(child)
    peak.rss = Math.max(peak.rss, now.rss)
    peak.outsideHeap = Math.max(peak.outsideHeap, now.outsideHeap)
  }
  const sampler = (async () => {
    while (performance.now() < deadline) {
      await sample()
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  })()
  await Promise.all([...guessers, realUser, sampler])
  await sample()
  realAgent.destroy()
  const ok = logins.filter((l) => l.status === 200).map((l) => l.ms)
  return {
    idleLoginMs: percentile(idle, 50),
    before,
    peak,
    floodStatuses: count(floodStatuses),
    floodChecked: floodStatuses.filter((s) => s === 401).length,
    logins: count(logins.map((l) => l.status)),
    loginP50: percentile(logins.map((l) => l.ms), 50),
    loginMax: Math.max(...logins.map((l) => l.ms)),
    okP50: percentile(ok, 50),
    okMax: ok.length === 0 ? NaN : Math.max(...ok)
  }
}

export async function securityBench (seconds) {
  // not a CPU-per-request row: the server's password checks and the clients share every core, as before pinning
  pinLoadGenerator(false)
  const hash = await hashPassword('admin') // the default cost: scrypt N=2^15, r=8, 32 MiB per check
  const security = (more, firewall) => ({
    debug: false,
    security: { users: { admin: { password: hash, roles: ['ROLE_ADMIN'] } }, firewalls: [{ name: 'main', httpBasic: true, ...firewall }], ...more }
  })
  const configurations = [
    { name: 'unprotected', options: security({ passwordChecks: { concurrency: 1024, queue: 0, perClient: 1024 } }, { loginThrottling: false }) },
    { name: 'defaults', options: security({}, {}) }
  ]
  const lines = [`Security: ${seconds} s per run, scrypt at the default cost; "unprotected" = loginThrottling: false and no bound on concurrent checks`, '']
  const checks = []
  lines.push('| server | brute force, 1 client, 16 connections: requests / guesses checked (rate) / statuses | flood: 64 clients, statuses / checks | real login (every 200 ms): statuses | real login p50 / max ms (idle: p50) | RSS before → peak (MB) | outside the JS heap: before → peak (MB) |')
  lines.push('|---|---|---|---|---|---|---|')
  for (const configuration of configurations) {
    let server = await start(configuration.options)
    const brute = await bruteForce(server.port, seconds)
    // a fresh server: the flood must not start with the brute force's counters
    await stopServer(server.child)
    server = await start(configuration.options)
    const f = await flood(server, seconds)
    await stopServer(server.child)
    const perSecond = (brute.checked / seconds).toFixed(1)
    lines.push(`| ${configuration.name} | ${brute.total} / ${brute.checked} (${perSecond}/s) / ${brute.statuses} | ${f.floodStatuses} / ${f.floodChecked} | ${f.logins} | ${Math.round(f.loginP50)} / ${Math.round(f.loginMax)} (idle ${Math.round(f.idleLoginMs)}) | ${(f.before.rss / MIB).toFixed(0)} → ${(f.peak.rss / MIB).toFixed(0)} | ${(f.before.outsideHeap / MIB).toFixed(0)} → ${(f.peak.outsideHeap / MIB).toFixed(0)} |`)
    if (configuration.name === 'defaults') {
      // the defaults: 5 per user name and client, 25 per client, per minute; 2 checks at once, 8 waiting
      const windows = Math.ceil(seconds / 60)
      checks.push([`throttled brute force: ${brute.checked} checks ≤ ${25 * windows} (25 per client per minute)`, brute.checked <= 25 * windows])
      const bound = (8 / 2 + 2) * f.idleLoginMs * 2
      checks.push([`real login under the flood answers within ${Math.round(bound)} ms ((queue / concurrency + 2) × idle check × 2): max ${Math.round(f.loginMax)} ms`, f.loginMax <= bound])
      // scrypt's 32 MiB per check lives outside the JS heap (OpenSSL, on libuv's threads): the
      // gate bounds it to 2 checks at once. The JS heap grows under any 64-client flood (V8
      // keeps the space it collected in); it is shown in the table, not bounded here.
      const outside = f.peak.outsideHeap - f.before.outsideHeap
      checks.push([`memory outside the JS heap under ${FLOOD_CLIENTS} concurrent guessers: peak − before = ${(outside / MIB).toFixed(0)} MB ≤ 3 × 32 MiB (2 checks at once + slack; RSS as a whole: +${((f.peak.rss - f.before.rss) / MIB).toFixed(0)} MB)`, outside <= 3 * 32 * MIB])
    }
  }
  lines.push('')
  for (const [text, ok] of checks) lines.push(`${ok ? 'PASS' : 'FAIL'} ${text}`)
  return lines.join('\n')
}
