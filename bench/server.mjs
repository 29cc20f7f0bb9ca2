// One server under load: `node bench/server.mjs bare` or `node bench/server.mjs kernel '<kernel options JSON>'`;
// `als`: bare Fastify running each request in an AsyncLocalStorage (the floor of the profiler's
// request tracking); `http`: node:http alone, the same JSON answer and a 404 (the floor of any
// framework); `page`: bare Fastify sending the kernel's production 404 page (its floor); `otel`: bare Fastify under OpenTelemetry (bench/otel-preload.mjs, loaded with
// --import by bench/server-process.mjs). Prints its port on stdout, then serves until killed. Same routes in all, so
// the work differs only by the kernel. BENCH_DIST: another build of the package (A/B runs).
import Fastify from 'fastify'
import { AsyncLocalStorage } from 'node:async_hooks'
import { createServer } from 'node:http'
import { pathToFileURL } from 'node:url'

const { createKernelApp } = await import(process.env.BENCH_DIST === undefined ? '../dist/index.js' : pathToFileURL(`${process.env.BENCH_DIST}/index.js`).href)

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

const app = kind === 'kernel'
  ? await createKernelApp({ kernel: options })
  : kind === 'http' ? nodeHttp() : kind === 'page' ? await kernelPageApp() : Fastify() // `otel`: @fastify/otel registers itself as the instance is created
if (kind === 'als') {
  // what the kernel does when the profiler tracks requests, and nothing else: every request,
  // its hooks and handler run in the request's store, so each promise carries it
  const store = new AsyncLocalStorage()
  app.addHook('onRequest', (request, _reply, done) => { store.run({ request }, done) })
}
// requests answered, counted where Node hands them over: what the profiler's counts must add up to
let served = 0
let inFlight = 0
app.server.on('request', (request, response) => {
  served++
  inFlight++
  response.once('close', () => { inFlight-- })
})

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

/**
 * The floor of the kernel's production 404: bare Fastify whose not-found handler sends the page
 * the kernel sends (its status, headers and bytes, taken from a kernel app once), with none of
 * the kernel's work (the routing failure, the exception, its listeners).
 */
async function kernelPageApp () {
  const kernel = await createKernelApp({ kernel: { debug: false } })
  const page = await kernel.inject({ url: '/robots.txt', headers: { accept: 'text/html', host: '127.0.0.1' } })
  await kernel.close()
  const app = Fastify()
  app.setNotFoundHandler((_request, reply) => {
    reply.code(page.statusCode).header('vary', page.headers.vary).header('content-type', page.headers['content-type']).send(page.body)
  })
  return app
}

/** node:http answering what bare Fastify answers on these routes, with an `app`'s few methods the rest of this file calls. */
function nodeHttp () {
  const NOT_FOUND = JSON.stringify({ message: 'Route GET:/robots.txt not found', error: 'Not Found', statusCode: 404 })
  const server = createServer((request, response) => {
    const match = request.method === 'GET' ? /^\/hello\/([^/?]+)$/.exec(request.url) : null
    const body = match === null ? NOT_FOUND : JSON.stringify({ hello: match[1] })
    response.writeHead(match === null ? 404 : 200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) })
    response.end(body)
  })
  return {
    server,
    get: () => undefined,
    post: () => undefined,
    addHook: () => undefined,
    listen: ({ port, host }) => new Promise((resolve) => server.listen(port, host, resolve))
  }
}

await app.listen({ port: 0, host: '127.0.0.1' })
process.stdout.write(`${app.server.address().port}\n`)
process.on('SIGINT', () => process.exit(0)) // exit cleanly, so --cpu-prof can write its profile
// a CPU profile of a stretch of the load (bench/cpu-profile.mjs): started and stopped by message
let inspector
process.on('message', async (message) => {
  if (message?.cpuProfile === 'start' || message?.cpuProfile === 'stop') {
    const { Session } = await import('node:inspector')
    const post = (method, params) => new Promise((resolve, reject) => inspector.post(method, params, (error, result) => error ? reject(error) : resolve(result)))
    if (message.cpuProfile === 'start') {
      inspector ??= new Session()
      inspector.connect()
      await post('Profiler.enable')
      await post('Profiler.start')
      process.send({ cpuProfile: 'started' })
    } else {
      const { profile } = await post('Profiler.stop')
      inspector.disconnect()
      const { writeFileSync } = await import('node:fs')
      writeFileSync(message.path, JSON.stringify(profile))
      process.send({ cpuProfile: 'stopped' })
    }
    return
  }
  if (message !== 'memory' && message !== 'settled') return
  // a running profiler (an inactive one has no storage; a build before units of work had no `enabled`)
  const profiler = app.kernelProfiler?.storage === undefined ? undefined : app.kernelProfiler
  // the counts once every profile of the requests served so far is stored (or dropped)
  if (message === 'settled') {
    // requests the load generator left in flight (a slow route's, at its end) terminate first,
    // so that their profiles are counted (bounded: a request that never ends does not hang it)
    const busy = () => inFlight > 0
    for (let waited = 0; busy() && waited < 5000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5))
    await profiler?.settled()
  }
  const { rss, heapUsed, heapTotal } = process.memoryUsage()
  const { user, system } = process.cpuUsage()
  process.send({
    cpu: user + system,
    rss,
    heapUsed,
    heapTotal,
    served,
    profiles: profiler?.storage.size ?? null,
    saved: profiler?.saved ?? null,
    dropped: profiler?.dropped ?? null,
    // the OpenTelemetry peer: the spans its exporter was given
    exported: globalThis.benchOtelExported ?? null
  })
})
