/**
 * One contract, every storage: the suite apps run against their own (`fastify-kernel/testing`)
 * holds the memory, file and Redis storages and an app's own to the same rules; the app's own
 * then serves a real app through `profiler.storage`.
 */
import t from 'tap'
import type { Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { profileStorageContract } from '../../src/profiler/storage/contract.js'
import { MemoryProfileStorage } from '../../src/profiler/storage/memory.js'
import { FileProfileStorage } from '../../src/profiler/storage/file.js'
import { RedisProfileStorage } from '../../src/profiler/storage/redis.js'
import { systemClock } from '../../src/clock.js'
import { buildApp, profilerOf } from '../helpers.js'
import { host, page } from './helpers.js'
import { TestRedis } from '../redis/server.js'
import { MapStorage } from './map-storage.js'

const quiet = { warn: () => undefined }

function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'profiler-contract-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

t.test('the memory storage keeps the contract', async (t) => {
  await profileStorageContract(t, async ({ maxProfiles, maxAgeMs, clock }) => new MemoryProfileStorage({ maxProfiles, maxAgeMs, maxBytes: 64 * 1024 * 1024 }, clock))
})

t.test('the file storage keeps the contract', async (t) => {
  await profileStorageContract(t, async ({ maxProfiles, maxAgeMs, clock }) => await FileProfileStorage.open(tempDir(t), { maxProfiles, maxAgeMs }, quiet, { clock }))
})

t.test('the Redis storage keeps the contract', async (t) => {
  const redis = await TestRedis.start(t)
  const client = new Redis(redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 500, lazyConnect: true })
  client.on('error', () => undefined)
  t.teardown(() => { client.disconnect() })
  await client.connect()
  let opened = 0
  // each case a storage of its own: a prefix of its own on the one server
  await profileStorageContract(t, async ({ maxProfiles, maxAgeMs, clock }) => await RedisProfileStorage.open({ client, prefix: `contract-${++opened}:{profiler}:`, maxProfiles, maxAgeMs, log: quiet, clock }))
})

t.test('an app\'s own storage, written from the public types, keeps the contract', async (t) => {
  await profileStorageContract(t, async (settings) => new MapStorage(settings))
})

t.test('an app\'s own storage serves the profiler: a request profiled, its pages shown, the kernel closes it after the last save', async (t) => {
  const storage = new MapStorage({ maxProfiles: 100, maxAgeMs: 3_600_000, clock: systemClock })
  const app = await buildApp({ debug: true, profiler: { storage } })
  t.equal(profilerOf(app).storage, storage, 'used as is')
  const res = await app.inject({ url: '/hello/storage', headers: { host } })
  const profile = await app.kernelProfiler.profileOf(res)
  t.equal(profile.url, `http://${host}/hello/storage`)
  t.same(storage.calls, [`save ${profile.token}`], 'stored in the app\'s storage')
  const shown = await page(app, `/_profiler/${profile.token}?panel=request`)
  t.equal(shown.statusCode, 200)
  t.match(shown.body, '/hello/storage')
  const search = await page(app, '/_profiler/?url=storage')
  t.match(search.body, profile.token, 'the search page lists it')
  const config = await page(app, `/_profiler/${profile.token}?panel=config`)
  t.match(config.body, 'map (the app&#x27;s own)', 'the configuration panel names it')
  await app.kernelProfiler.record({ kind: 'job', name: 'storage:check' }, async () => 'done')
  await profilerOf(app).settled()
  t.same((await storage.find({ kind: 'job' })).map((summary) => summary.name), ['storage:check'], 'a unit of work is stored there too')

  // the app closes while its last request's profile is still being saved
  const last = await app.inject({ url: '/about', headers: { host } })
  await app.close()
  t.same(storage.calls.slice(-2), [`save ${String(last.headers['x-debug-token'])}`, 'close'], 'closed by the kernel, after its last save')
})

t.test('production: an app\'s storage is never used, and closed with the app', async (t) => {
  const storage = new MapStorage({ maxProfiles: 100, maxAgeMs: 3_600_000, clock: systemClock })
  const app = await buildApp({ debug: false, profiler: { storage } })
  const res = await app.inject({ url: '/about', headers: { host } })
  t.notOk(res.headers['x-debug-token'])
  await app.close()
  t.same(storage.calls, ['close'])
})

t.test('profiler.storage: a storage object must have what the interface says; the built-in storages\' options are refused beside it', async (t) => {
  const refusal = async (profiler: unknown, debug = true): Promise<string> => {
    const error = await buildApp({ debug, profiler: profiler as never }).then(async (app) => { await app.close(); return undefined }, (e: unknown) => e as Error & { code: string })
    t.equal(error?.code, 'KERNEL_INVALID_OPTIONS')
    return error?.message ?? ''
  }
  t.equal(await refusal({ storage: {} }), 'fastify-kernel: invalid options: option "profiler.storage" is not a profile storage: it has no reserveToken(), releaseToken(), save(), load(), find(), purge(), close(), kind, size (ProfileStorage, docs/profiler.md "Storage").')
  const storage = new MapStorage({ maxProfiles: 100, maxAgeMs: 3_600_000, clock: systemClock })
  const partial = { kind: 'partial', size: 0, reserveToken: () => 'abcdef', load: storage.load.bind(storage), find: storage.find.bind(storage) }
  t.equal(await refusal({ storage: partial }, false), 'fastify-kernel: invalid options: option "profiler.storage" is not a profile storage: it has no releaseToken(), save(), purge(), close() (ProfileStorage, docs/profiler.md "Storage").', 'named in production too')
  t.equal(await refusal({ storage: Object.assign(Object.create(storage) as MapStorage, { kind: 'My Storage' }) }), 'fastify-kernel: invalid options: option "profiler.storage": its kind must be a short lower-case name (^[a-z][a-z0-9_-]{0,31}$), got "My Storage".')
  t.equal(await refusal({ storage, maxProfiles: 10, maxAge: 60, directory: 'var/profiles' }), 'fastify-kernel: invalid options: options "profiler.directory", "profiler.maxProfiles", "profiler.maxAge" configure the kernel\'s own storages: a storage object keeps its own bounds.')
  t.equal(await refusal({ storage: 5 }), 'fastify-kernel: invalid options: option "profiler.storage" must be "memory", "file", "redis" or a storage object.')
  t.equal(await refusal({ storage: 'disk' }), 'fastify-kernel: invalid options: option "profiler.storage" must be equal to one of the allowed values (memory, file, redis).', 'a name as before')
  t.same(storage.calls, [], 'a refused storage is never used, nor closed: it stays the app\'s')
})
