// What the spans' origins cost a whole request, in one process: two apps, every request profiled
// (saveBudget 1), one with `origins` (the default) and one without, each serving the bench's I/O
// route (10 ioredis GETs to a real redis-server and one fetch to a local server: 11 spans) through
// inject(), rounds alternated, the process's CPU per request (its threads: V8's collector
// included) until every profile is stored. No load generator competes for the CPU, so the figure
// holds on a busy machine better than the servers' rows. Medians of 11 rounds.
import { createServer } from 'node:http'
import { once } from 'node:events'
import { Redis } from 'ioredis'
import { createKernelApp } from '../dist/index.js'

const REQUESTS = 600
const ROUNDS = 11
const SPANS = 11

async function app (origins, redisUrl, upstreamUrl) {
  const server = await createKernelApp({ kernel: { debug: true, profiler: { storage: 'memory', saveBudget: 1, origins } } })
  const redis = new Redis(redisUrl, { lazyConnect: true })
  await redis.connect()
  server.addHook('onClose', async () => { redis.disconnect() })
  server.get('/io', async () => {
    for (let i = 0; i < 10; i++) await redis.get(`bench:${i}`)
    return (await fetch(upstreamUrl)).text()
  })
  await server.ready()
  return server
}

/** µs of the process's CPU per request: REQUESTS requests, 10 at a time, their profiles stored. */
async function cpuPerRequest (server) {
  const start = process.cpuUsage()
  for (let sent = 0; sent < REQUESTS; sent += 10) {
    await Promise.all(Array.from({ length: 10 }, () => server.inject({ url: '/io', headers: { host: 'localhost' } })))
  }
  await server.kernelProfiler.settled()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / REQUESTS
}

/** `redisUrl`: a redis-server for the route's commands (bench/run.mjs starts one). */
export async function originCost (redisUrl) {
  const upstream = createServer((_request, response) => { response.end('upstream') })
  upstream.listen(0, '127.0.0.1')
  await once(upstream, 'listening')
  const upstreamUrl = `http://127.0.0.1:${upstream.address().port}/`
  const on = await app(true, redisUrl, upstreamUrl)
  const off = await app(false, redisUrl, upstreamUrl)
  try {
    for (const server of [on, off]) await cpuPerRequest(server) // warm-up: the JIT, the connections
    const differences = []
    const figures = { on: [], off: [] }
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? [['on', on], ['off', off]] : [['off', off], ['on', on]]
      const cpu = {}
      for (const [name, server] of order) {
        cpu[name] = await cpuPerRequest(server)
        figures[name].push(cpu[name])
      }
      differences.push((cpu.on - cpu.off) / SPANS)
    }
    const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
    return `Origins in a whole request (one process, inject(), the I/O route's ${SPANS} spans, every request profiled; ${ROUNDS} alternated rounds of ${REQUESTS} requests, medians): ${median(figures.on).toFixed(1)} µs of CPU a request with origins, ${median(figures.off).toFixed(1)} µs without (profiler.origins: false): ${median(differences).toFixed(2)} µs per span (rounds: ${differences.map((d) => d.toFixed(1)).join(', ')})`
  } finally {
    await on.close()
    await off.close()
    upstream.close()
  }
}
