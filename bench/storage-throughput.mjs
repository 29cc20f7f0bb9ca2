// Profiles written per second by each storage (memory, file, Redis), in this process: a real
// profile (the bench's matched route, built by the kernel) saved under fresh tokens as fast as
// the storage takes them, BENCH_STORAGE_PROFILES of them (default 20,000), 50 a turn of the
// event loop and at most 1,000 unsettled at once (as the profiler bounds its pending saves),
// until every save has settled (the file storage: on disk; Redis: stored by the server). The
// storage's count bound is larger than the run, so every profile is really written; the CPU
// of this process (its threads included) per profile is printed with it.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { createKernelApp } from '../dist/index.js'
import { MemoryProfileStorage } from '../dist/src/profiler/storage/memory.js'
import { FileProfileStorage } from '../dist/src/profiler/storage/file.js'
import { RedisProfileStorage } from '../dist/src/profiler/storage/redis.js'

const COUNT = Number(process.env.BENCH_STORAGE_PROFILES ?? 20_000)
const silent = { warn: () => undefined }

/** One profile of the matched route, as the profiler stores it. */
async function sampleProfile () {
  const app = await createKernelApp({ kernel: { debug: true, profiler: { storage: 'memory', saveBudget: 1 } } })
  app.get('/hello/:name', async (request) => ({ hello: request.params.name }))
  const response = await app.inject({ url: '/hello/world', headers: { accept: 'text/html' } })
  const profile = await app.kernelProfiler.profileOf(response)
  await app.close()
  return profile
}

/** Profiles saved in one turn of the event loop, and saves left unsettled at most (as the profiler bounds its pending saves). */
const TURN = 50
const PENDING = 1000

async function measure (storage, profile) {
  const cpu = process.cpuUsage()
  const started = performance.now()
  const pending = new Set()
  let refused = 0
  const now = Date.now()
  for (let i = 0; i < COUNT; i++) {
    let token = storage.reserveToken()
    // Redis reserves tokens 256 at a time: a draw that finds none waits for the next batch
    while (token === undefined) {
      await storage.refilled()
      token = storage.reserveToken()
    }
    const save = storage.save({ ...profile, token, time: now }).catch(() => { refused++ }).finally(() => { pending.delete(save); storage.releaseToken(token) })
    pending.add(save)
    if (i % TURN === TURN - 1) await new Promise((resolve) => setImmediate(resolve))
    while (pending.size >= PENDING) await Promise.race(pending)
  }
  await Promise.all(pending)
  await storage.idle?.()
  const seconds = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  return { perSecond: (COUNT - refused) / seconds, cpuPerProfile: (used.user + used.system) / COUNT, stored: storage.size, refused }
}

/** `{ memory, file, redis }`: profiles/s and CPU µs per profile; Redis only with a URL. */
export async function storageThroughput (redisUrl) {
  const profile = await sampleProfile()
  const limits = { maxProfiles: COUNT * 2, maxAgeMs: 3_600_000 }
  const rows = []
  const memory = new MemoryProfileStorage({ ...limits, maxBytes: 1 << 30 })
  rows.push(['memory', await measure(memory, profile)])
  const dir = mkdtempSync(join(tmpdir(), 'bench-storage-'))
  try {
    const file = await FileProfileStorage.open(dir, limits, silent)
    rows.push(['file', await measure(file, profile)])
    await file.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  if (redisUrl !== undefined) {
    const { Redis } = await import('ioredis')
    const client = new Redis(redisUrl, { lazyConnect: true })
    await client.connect()
    const redis = await RedisProfileStorage.open({ client, ...limits, prefix: `bench-storage-${process.pid}:{profiler}:`, commandTimeoutMs: 10_000, log: silent })
    rows.push(['redis', await measure(redis, profile)])
    await redis.purge()
    await redis.close()
    client.disconnect()
  }
  return [
    `Storage throughput: ${COUNT} profiles of ${JSON.stringify(profile).length} bytes saved as fast as each storage takes them, until all are stored (target ≥ 5,000/s):`,
    '| storage | profiles/s | CPU µs per profile (this process, all threads) | stored | refused |',
    '|---|---:|---:|---:|---:|',
    ...rows.map(([name, r]) => `| ${name} | ${Math.round(r.perSecond)} | ${r.cpuPerProfile.toFixed(1)} | ${r.stored} | ${r.refused} |`)
  ].join('\n')
}

if (import.meta.url === pathToFileURL(resolve(process.argv[1])).href) console.log(await storageThroughput(process.argv[2]))
