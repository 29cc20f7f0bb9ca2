// One server under load: `node bench/server.mjs bare` or `node bench/server.mjs kernel '<kernel options JSON>'`.
// Prints its port on stdout, then serves until killed. Same routes in both, so the work differs only by the kernel.
import Fastify from 'fastify'
import { readdirSync } from 'node:fs'
import { createKernelApp } from '../dist/index.js'

const [kind = 'bare', optionsJson = '{}'] = process.argv.slice(2)
const options = JSON.parse(optionsJson)
// the Redis storage takes the app's client: made here from the URL the bench passes
const redisUrl = options.profiler?.redisUrl
if (redisUrl !== undefined) {
  const { Redis } = await import('ioredis')
  const client = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 500, lazyConnect: true })
  await client.connect()
  delete options.profiler.redisUrl
  options.profiler.redis = { client }
}

const app = kind === 'bare'
  ? Fastify()
  : await createKernelApp({ kernel: options })

app.get('/hello/:name', async (request) => ({ hello: request.params.name }))
app.post('/hello/:name', async () => ({ posted: true }))
app.get('/items/:id(^\\d+$)', async (request) => ({ id: request.params.id }))

// what a page calls outside the process: 10 Redis commands and one fetch (bench/run.mjs passes
// the servers); the profiler records each as a span
const ioRedisUrl = process.env.BENCH_IO_REDIS_URL
const upstreamUrl = process.env.BENCH_IO_UPSTREAM_URL
if (ioRedisUrl !== undefined && upstreamUrl !== undefined) {
  const { Redis } = await import('ioredis')
  const redis = new Redis(ioRedisUrl, { lazyConnect: true })
  await redis.connect()
  app.addHook('onClose', async () => { redis.disconnect() })
  app.get('/io', async () => {
    for (let i = 0; i < 10; i++) await redis.get(`bench:${i}`)
    return (await fetch(upstreamUrl)).text()
  })
}

await app.listen({ port: 0, host: '127.0.0.1' })
process.stdout.write(`${app.server.address().port}\n`)
process.on('SIGINT', () => process.exit(0)) // exit cleanly, so --cpu-prof can write its profile
process.on('message', (message) => {
  if (message !== 'memory') return
  const { rss, heapUsed, heapTotal } = process.memoryUsage()
  const profiler = app.kernelProfiler
  const directory = options.profiler?.directory
  const { user, system } = process.cpuUsage()
  process.send({
    cpu: user + system,
    rss,
    heapUsed,
    heapTotal,
    profiles: profiler?.storage.size ?? null,
    dropped: profiler?.dropped ?? null,
    files: directory === undefined ? null : readdirSync(directory).filter((name) => name.endsWith('.json')).length
  })
})
