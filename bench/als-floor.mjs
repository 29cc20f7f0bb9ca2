// The floor under the profiler's per-span cost that is Node's, not the kernel's: what an
// AsyncLocalStorage in use (the profiler attributes each call to its request through one) adds
// to every promise. Each figure in fresh processes, alternated with processes where no
// AsyncLocalStorage was ever used, medians of 5; then the promises one Redis GET (ioredis) and
// one fetch (undici) create, counted with an async hook, give the floor per span.
import { execFileSync } from 'node:child_process'
import { createHook } from 'node:async_hooks'

const PROMISES = 200_000

/** In a child: µs per awaited promise chain step, inside an AsyncLocalStorage's run or with none. */
const CHILD = `
const { AsyncLocalStorage } = require('node:async_hooks')
const withStore = process.argv[1] === 'als'
const step = async (n) => { for (let i = 0; i < n; i++) await new Promise((resolve) => resolve(i)) }
const run = (fn) => withStore ? new AsyncLocalStorage().run({ request: 1 }, fn) : fn()
run(async () => {
  await step(20000) // warm-up
  const start = process.cpuUsage()
  await step(${PROMISES})
  const used = process.cpuUsage(start)
  process.stdout.write(String((used.user + used.system) / ${PROMISES}))
})
`

function perPromise (mode) {
  return Number(execFileSync(process.execPath, ['-e', CHILD, mode], { encoding: 'utf8' }))
}

/** How many promises `call` creates (async hook, type PROMISE). */
async function promisesOf (call) {
  let count = 0
  const hook = createHook({ init (_id, type) { if (type === 'PROMISE') count++ } }).enable()
  await call()
  hook.disable()
  return count
}

/** `redisUrl`, `upstreamUrl`: the I/O route's Redis and HTTP server (bench/run.mjs starts them). */
export async function alsFloor (redisUrl, upstreamUrl) {
  const plain = []
  const tracked = []
  for (let i = 0; i < 5; i++) {
    plain.push(perPromise('plain'))
    tracked.push(perPromise('als'))
  }
  const median = (values) => [...values].sort((a, b) => a - b)[2]
  const extra = median(tracked) - median(plain)
  const { Redis } = await import('ioredis')
  const redis = new Redis(redisUrl, { lazyConnect: true })
  await redis.connect()
  await redis.get('bench:warm')
  await fetch(upstreamUrl).then((response) => response.text())
  const redisPromises = await promisesOf(() => redis.get('bench:0'))
  const fetchPromises = await promisesOf(() => fetch(upstreamUrl).then((response) => response.text()))
  redis.disconnect()
  const perSpan = (extra * (10 * redisPromises + fetchPromises)) / 11
  return [
    `AsyncLocalStorage floor (Node ${process.versions.node}, fresh processes, medians of 5): ${(median(plain) * 1000).toFixed(0)} ns of CPU per awaited promise without one, ${(median(tracked) * 1000).toFixed(0)} ns inside one's run: +${(extra * 1000).toFixed(0)} ns a promise.`,
    `One Redis GET (ioredis) creates ${redisPromises} promises, one fetch of a short body ${fetchPromises}: the I/O route's 11 calls, tracked, cost at least ${perSpan.toFixed(2)} µs a call more than untracked, with no kernel at all.`
  ].join('\n')
}
