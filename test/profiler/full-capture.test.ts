import t from 'tap'
import type { Test } from 'tap'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { MemoryProfileStorage } from '../../src/profiler/storage/memory.js'
import { FileProfileStorage } from '../../src/profiler/storage/file.js'
import { RedisProfileStorage } from '../../src/profiler/storage/redis.js'
import { jsonSizeBound } from '../../src/profiler/storage/json-size.js'
import type { Profile } from '../../src/profiler/profile.js'
import { profilerOf, buildApp } from '../helpers.js'
import { fakeProfileMaker, host } from './helpers.js'
import { TestRedis } from '../redis/server.js'

// issue 20: every request profiled and stored at load (saveBudget 1), each storage keeping up
const fakeProfile = fakeProfileMaker(0x300000)
const quiet = { warn: () => undefined }

function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'profiler-full-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

t.test('the memory storage\'s byte bound counts at least each profile\'s JSON length, without serialising it', async (t) => {
  const values: unknown[] = [fakeProfile(), { a: [1, -2.5e-300, true, null, 'x'], b: { c: '' }, d: undefined }, [], {}, 'text', 123456789.123, false]
  for (const value of values) t.ok(jsonSizeBound(value) >= JSON.stringify(value).length, `${JSON.stringify(value).slice(0, 40)}: ${jsonSizeBound(value)} ≥ ${JSON.stringify(value).length}`)
  const app = await buildApp({ debug: true, profiler: { saveBudget: 1 } })
  t.teardown(() => app.close())
  const profile = await app.kernelProfiler!.profileOf(await app.inject({ url: '/hello/world', headers: { host } }))
  t.ok(jsonSizeBound(profile) >= JSON.stringify(profile).length, 'a real profile')
})

t.test('the memory storage keeps the profile it was given; a load is a copy of it', async (t) => {
  const store = new MemoryProfileStorage({ maxProfiles: 10, maxAgeMs: 60_000, maxBytes: 1 << 20 })
  const profile = fakeProfile({ collected: { when: new Date(0) } as Profile['collected'] })
  await store.save(profile)
  const loaded = await store.load(profile.token)
  t.same(loaded, JSON.parse(JSON.stringify(profile)), 'as JSON gives it back (a Date as its ISO string)')
  loaded!.collected.changed = true
  t.notOk('changed' in (await store.load(profile.token))!.collected, 'changing a loaded profile changes no other')
})

t.test('file storage under a burst beyond its bound: the bound keeps the newest, and the segment of those it dropped goes with them', async (t) => {
  const dir = tempDir(t)
  const store = await FileProfileStorage.open(dir, { maxProfiles: 5, maxAgeMs: 60_000 }, quiet)
  const profiles = Array.from({ length: 60 }, () => fakeProfile())
  // saved in one turn, faster than any disk: one write, the bound far behind
  await Promise.all(profiles.map((profile) => store.save(profile)))
  for (const profile of profiles.slice(-5)) t.same(await store.load(profile.token), profile)
  t.equal(await store.load(profiles[0].token), undefined, 'the oldest are gone')
  t.equal(store.size, 5)
  // the next writes fill new segments; once none of the burst's profiles is kept, its segment goes
  for (let i = 0; i < 5; i++) await store.save(fakeProfile())
  // the writer's segments are named after its slot
  const slot = readdirSync(join(dir, 'writers')).find((name) => name.endsWith('.lock'))!.slice(0, 2)
  await store.close()
  t.same(readdirSync(join(dir, 'segments')).sort(), [2, 3, 4, 5, 6].map((n) => `${slot}-${n}.jsonl`), 'the burst\'s segment is deleted (a profile a segment: maxProfiles 5)')
})

t.test('file storage: a token saved again before its turn settles both saves, the later profile kept', async (t) => {
  const dir = tempDir(t)
  const store = await FileProfileStorage.open(dir, { maxProfiles: 5, maxAgeMs: 60_000 }, quiet)
  const first = fakeProfile()
  const blocker = store.save(fakeProfile())
  const again = { ...first, url: '/again' }
  await Promise.all([blocker, store.save(first), store.save(again)])
  await store.idle()
  t.equal((await store.load(first.token))?.url, '/again')
  await store.close()
})

t.test('redis storage: the saves of one turn go in one call; a token not reserved fails alone', async (t) => {
  const redis = await TestRedis.start(t)
  const client = new Redis(redis.url, { lazyConnect: true })
  t.teardown(() => { client.disconnect() })
  await client.connect()
  const scripts: string[] = []
  const counting = { call: (command: string, ...args: Array<string | number>) => { if (command.startsWith('EVAL')) scripts.push(command); return client.call(command, ...args) } }
  const store = await RedisProfileStorage.open({ client: counting, maxProfiles: 100, maxAgeMs: 60_000, log: quiet })
  t.teardown(() => store.close())
  const profiles = Array.from({ length: 10 }, () => fakeProfile({ token: store.reserveToken()! }))
  const stranger = fakeProfile({ token: 'abc123' })
  await client.set('fastify-kernel:{profiler}:p:abc123', 'r:someone-else')
  // the first save loads the script into Redis (EVALSHA refused, then EVAL)
  await store.save(fakeProfile({ token: store.reserveToken()! }))
  scripts.length = 0
  const outcomes = await Promise.allSettled([...profiles, stranger].map((profile) => store.save(profile)))
  t.equal(scripts.length, 1, 'one script call for eleven saves')
  t.same(outcomes.map((o) => o.status), [...profiles.map(() => 'fulfilled'), 'rejected'])
  t.match((outcomes.at(-1) as PromiseRejectedResult).reason, { code: 'KERNEL_TOKEN_NOT_RESERVED' })
  for (const profile of profiles) t.same(await store.load(profile.token), profile)
  t.equal(store.size, 11)
})

for (const storage of ['memory', 'file', 'redis'] as const) {
  t.test(`full capture (saveBudget 1) with ${storage} storage: every request served is stored, none dropped`, async (t) => {
    const profiler: Record<string, unknown> = { saveBudget: 1, storage, maxProfiles: 50 }
    if (storage === 'file') profiler.directory = tempDir(t)
    if (storage === 'redis') {
      const redis = await TestRedis.start(t)
      const client = new Redis(redis.url, { lazyConnect: true })
      t.teardown(() => { client.disconnect() })
      await client.connect()
      profiler.redis = { client }
    }
    const app = await buildApp({ debug: true, profiler })
    t.teardown(() => app.close())
    // far more than the storage keeps, in waves of 50 at once: the bound evicts the oldest,
    // nothing is dropped. inject() never yields to I/O: each wave is let settle, so that Redis'
    // replies (its token reservations, 256 at a time) come in between waves as under real load
    const responses = []
    for (let wave = 0; wave < 8; wave++) {
      responses.push(...await Promise.all(Array.from({ length: 50 }, (_, i) => app.inject({ url: `/hello/${wave * 50 + i}`, headers: { host } }))))
      await app.kernelProfiler!.settled()
    }
    t.ok(responses.every((res) => res.statusCode === 200 && /^[0-9a-f]{6}$/.test(String(res.headers['x-debug-token']))), 'every response has its token')
    await app.kernelProfiler!.settled()
    t.equal(profilerOf(app).saved, 400, 'stored: as many as served')
    t.equal(profilerOf(app).dropped, 0, 'none dropped')
    t.equal(profilerOf(app).storage.size, 50, 'the storage holds its bound')
    const newest = responses.at(-1)!
    t.equal((await app.kernelProfiler!.profileOf(newest)).url.endsWith('/hello/399'), true, 'the newest is readable')
  })
}
