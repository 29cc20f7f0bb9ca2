import t from 'tap'
import type { Test } from 'tap'
import { once } from 'node:events'
import { Writable } from 'node:stream'
import { Redis } from 'ioredis'
import { RedisProfileStorage, RETRY_AFTER_MS } from '../../src/profiler/storage/redis.js'
import type { Profile } from '../../src/profiler/profile.js'
import { buildApp, profilerOf } from '../helpers.js'
import { fakeProfileMaker, host } from './helpers.js'
import { TestRedis } from '../redis/server.js'
import { ManualClock } from '../clock.js'

const fakeProfile = fakeProfileMaker(0x200000)

const quiet = { warn: () => undefined }

/** A client as the service configures it: no offline queue, bounded calls. */
async function appClient (t: Test, redis: TestRedis): Promise<Redis> {
  const client = new Redis(redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 500, lazyConnect: true })
  client.on('error', () => undefined)
  t.teardown(() => { client.disconnect() })
  await client.connect()
  return client
}

/** A profile under a token the storage reserved (as the profiler does). */
function reservedProfile (store: RedisProfileStorage, overrides: Partial<Profile> = {}): Profile {
  const token = store.reserveToken()
  if (token === undefined) throw new Error('no token reserved')
  return fakeProfile({ ...overrides, token })
}

t.test('redis storage: save, load, find with filters, expiry set on every key, purge', async (t) => {
  const redis = await TestRedis.start(t)
  const admin = redis.client(t)
  const store = await RedisProfileStorage.open({ client: await appClient(t, redis), maxProfiles: 10, maxAgeMs: 60_000, log: quiet })
  t.teardown(() => store.close())
  const a = reservedProfile(store, { method: 'POST', statusCode: 404, time: Date.now() - 10 })
  const b = reservedProfile(store)
  await store.save(a)
  await store.save(b)
  t.same(await store.load(a.token), a)
  t.same((await store.find()).map((s) => s.token), [b.token, a.token], 'newest first')
  t.same((await store.find({ method: 'post' })).map((s) => s.token), [a.token])
  t.same((await store.find({ status: '4xx' })).map((s) => s.token), [a.token])
  t.same((await store.find({ limit: 1 })).map((s) => s.token), [b.token])
  t.equal(store.size, 2)
  const ttl = Number(await admin.ttl(`fastify-kernel:{profiler}:p:${a.token}`))
  t.ok(ttl > 50 && ttl <= 60, `the body expires with maxAge (${ttl} s)`)
  t.ok(Number(await admin.ttl('fastify-kernel:{profiler}:index')) > 0, 'so does the index')
  t.equal(await store.load('zzzzzz'), undefined)
  t.equal(await store.load(store.reserveToken()!), undefined, 'a reserved token without a profile is not found')

  await admin.set(`fastify-kernel:{profiler}:p:${b.token}`, JSON.stringify({ ...b, statusCode: 'wrong' }))
  t.equal(await store.load(b.token), undefined, 'a body of the wrong shape is not found')
  await admin.zadd('fastify-kernel:{profiler}:index', Date.now(), 'abcdef{"token":"abcdef","time":8.64e15}')
  t.notOk((await store.find()).some((s) => s.token === 'abcdef'), 'an index member of the wrong shape is skipped')

  await store.purge()
  t.equal(await store.load(a.token), undefined)
  t.same(await admin.keys('fastify-kernel:*'), [])
})

t.test('redis storage: tokens are unique across processes (set-if-absent), and a token is saved only by its holder', async (t) => {
  const redis = await TestRedis.start(t)
  const one = await RedisProfileStorage.open({ client: await appClient(t, redis), maxProfiles: 100, maxAgeMs: 60_000, log: quiet })
  const two = await RedisProfileStorage.open({ client: await appClient(t, redis), maxProfiles: 100, maxAgeMs: 60_000, log: quiet })
  t.teardown(async () => { await one.close(); await two.close() })
  const seen = new Map<string, string>()
  let collisions = 0
  for (let i = 0; i < 3000; i++) {
    for (const [name, store] of [['one', one], ['two', two]] as const) {
      let token = store.reserveToken()
      // the pool refills in the background: wait for it as a quiet moment would
      for (let refills = 0; token === undefined && refills < 3; refills++) { await store.refilled(); token = store.reserveToken() }
      if (token === undefined) throw new Error('the pool did not refill')
      if (seen.has(token)) collisions++
      // held, as by requests in flight or saved profiles
      seen.set(token, name)
    }
  }
  t.equal(collisions, 0, '6000 tokens drawn by two processes, none twice')

  const mine = one.reserveToken()!
  await t.rejects(two.save(fakeProfile({ token: mine })), /no longer reserved by this process/, 'another process cannot store under my token')
  await one.save(fakeProfile({ token: mine }))
  await t.rejects(two.save(fakeProfile({ token: mine })), /no longer reserved/, 'nor overwrite my profile')
  t.equal((await two.load(mine))?.token, mine, 'but it reads it')
})

t.test('redis storage: the count bound holds atomically under concurrent saves from two processes', async (t) => {
  const redis = await TestRedis.start(t)
  const admin = redis.client(t)
  const stores = await Promise.all([0, 1].map(async () => RedisProfileStorage.open({ client: await appClient(t, redis), maxProfiles: 50, maxAgeMs: 60_000, log: quiet })))
  t.teardown(async () => { for (const s of stores) await s.close() })
  const saved: Profile[] = []
  // every profile has a time of its own: with ties, which of two equal times survives the trim
  // is Redis' order of members, not the order of saving
  const base = Date.now() - 10_000
  for (let round = 0; round < 10; round++) {
    const batch = stores.flatMap((store, s) => Array.from({ length: 20 }, (_, i) => ({ store, profile: reservedProfile(store, { time: base + round * 100 + s * 20 + i }) })))
    saved.push(...batch.map((b) => b.profile))
    await Promise.all(batch.map(({ store, profile }) => store.save(profile)))
    const size = await admin.zcard('fastify-kernel:{profiler}:index')
    t.ok(size <= 50, `round ${round}: ${size} in the index`)
  }
  const bodies = (await admin.keys('fastify-kernel:{profiler}:p:*'))
  const profiles = (await Promise.all(bodies.map((k) => admin.get(k)))).filter((v) => v?.startsWith('{'))
  t.equal(profiles.length, 50, 'the bodies of trimmed profiles are deleted with their index entry')
  const newest = saved.sort((x, y) => x.time - y.time).slice(-50).map((p) => p.token).sort()
  t.same((await stores[0].find({ limit: 100 })).map((s) => s.token).sort(), newest, 'the newest 50 are kept')
})

t.test('redis storage: old profiles leave the index and their bodies expire', async (t) => {
  const redis = await TestRedis.start(t)
  const admin = redis.client(t)
  const store = await RedisProfileStorage.open({ client: await appClient(t, redis), maxProfiles: 50, maxAgeMs: 1000, log: quiet })
  t.teardown(() => store.close())
  const old = reservedProfile(store, { time: Date.now() - 5000 })
  await store.save(old)
  t.same(await store.find(), [], 'older than maxAge: not found')
  const fresh = reservedProfile(store)
  await store.save(fresh)
  t.equal(await admin.zscore('fastify-kernel:{profiler}:index', old.token + JSON.stringify({ token: old.token, method: old.method, url: old.url, statusCode: old.statusCode, ip: old.ip, time: old.time, duration: old.duration })), null, 'trimmed from the index by the next save')
  t.equal(await admin.exists(`fastify-kernel:{profiler}:p:${old.token}`), 0, 'and its body deleted')
})

t.test('redis storage: ages are read on its clock; Redis expires the keys itself', async (t) => {
  const redis = await TestRedis.start(t)
  const admin = redis.client(t)
  const clock = new ManualClock()
  const store = await RedisProfileStorage.open({ client: await appClient(t, redis), maxProfiles: 50, maxAgeMs: 60_000, log: quiet, clock })
  t.teardown(() => store.close())
  const old = reservedProfile(store, { time: clock.now() })
  await store.save(old)
  const pttl = Number(await admin.pttl(`fastify-kernel:{profiler}:p:${old.token}`))
  t.ok(pttl > 59_000 && pttl <= 60_000, `Redis expires its body after maxAge (${pttl} ms left)`)
  clock.advance(60_000)
  t.same((await store.find()).map((s) => s.token), [old.token], 'as old as maxAge: found')
  clock.advance(1)
  t.same(await store.find(), [], 'older: not found, though Redis still holds it')
  t.equal(await admin.exists(`fastify-kernel:{profiler}:p:${old.token}`), 1)
  await store.save(reservedProfile(store, { time: clock.now() }))
  t.equal(await admin.zcard('fastify-kernel:{profiler}:index'), 1, 'the next save trims it from the index')
  t.equal(await admin.exists(`fastify-kernel:{profiler}:p:${old.token}`), 0, 'and deletes its body')
})

/** The reservations Redis holds now (a token's key holding a process's marker, not a profile). */
async function reservationKeys (admin: Redis): Promise<string[]> {
  const keys = await admin.keys('fastify-kernel:{profiler}:p:*')
  const values = keys.length === 0 ? [] : await admin.mget(...keys)
  return keys.filter((_, i) => values[i]?.startsWith('r:') === true)
}

t.test('the app with redis storage after an idle gap (an injected clock): its reservations expired in Redis, the first requests are profiled all the same, nothing dropped', async (t) => {
  const redis = await TestRedis.start(t)
  const admin = redis.client(t)
  const clock = new ManualClock()
  const app = await buildApp({ debug: true, clock, profiler: { storage: 'redis', redis: { client: await appClient(t, redis) } } })
  t.teardown(() => app.close())
  const profiler = profilerOf(app)
  const before = await app.inject({ url: '/hello/before', headers: { host } })
  t.match(before.headers['x-debug-token'], /^[0-9a-f]{6}$/, 'profiled before the gap')
  await profiler.settled()
  // ten idle minutes: the process's clock moves on with no renewal run (a suspended laptop, a
  // paused container), and Redis expires the reservations (their TTL is 600 s): deleted here
  clock.advance(10 * 60_000)
  const expired = await reservationKeys(admin)
  t.ok(expired.length > 0, `${expired.length} reservations held before the gap`)
  await admin.del(...expired)
  for (const name of ['first', 'second', 'third']) {
    const res = await app.inject({ url: `/hello/${name}`, headers: { host, accept: 'text/html' } })
    const token = res.headers['x-debug-token']
    t.match(token, /^[0-9a-f]{6}$/, `the ${name} request after the gap has a token`)
    t.equal((await app.inject({ url: `/_wdt/${String(token)}`, headers: { host } })).statusCode, 200, 'its toolbar')
    t.match((await app.kernelProfiler.profileOf(res)).url, `/hello/${name}`, 'and its profile')
  }
  t.equal(profiler.dropped, 0, 'no unit lost')
  t.notMatch((await app.inject({ url: '/_profiler/', headers: { host } })).body, 'id="dropped"', 'the search page blames nothing')
  await (profiler.storage as RedisProfileStorage).renewPool()
  const renewed = await reservationKeys(admin)
  t.ok(renewed.length > 0, `the pool's reservations are made again (${renewed.length})`)
})

t.test('the app with redis storage after a few idle minutes (past the 300 s a reservation was once trusted for, its timers late): the first request is profiled and its draw renews the pool', async (t) => {
  const redis = await TestRedis.start(t)
  const admin = redis.client(t)
  const clock = new ManualClock()
  const app = await buildApp({ debug: true, clock, profiler: { storage: 'redis', redis: { client: await appClient(t, redis) } } })
  t.teardown(() => app.close())
  const profiler = profilerOf(app)
  await profiler.settled()
  // five minutes and a second on the process's clock with no renewal run; in Redis, the
  // reservations have 100 s left (their TTL is 600 s): still this process's
  clock.advance(5 * 60_000 + 1000)
  const held = await reservationKeys(admin)
  t.ok(held.length > 0, `${held.length} reservations held`)
  for (const key of held) await admin.expire(key, 100)
  const res = await app.inject({ url: '/hello/after', headers: { host, accept: 'text/html' } })
  const token = String(res.headers['x-debug-token'])
  t.match(token, /^[0-9a-f]{6}$/, 'the first request after the gap has a token (it had none when a draw let go of reservations older than 300 s)')
  t.equal((await app.inject({ url: `/_wdt/${token}`, headers: { host } })).statusCode, 200, 'its toolbar')
  t.match((await app.kernelProfiler.profileOf(res)).url, '/hello/after', 'and its profile')
  await profiler.settled()
  t.equal(profiler.dropped, 0, 'no unit lost')
  // the draw sent the renewal before the save, on the same connection: answered before it
  const ttls = await Promise.all((await reservationKeys(admin)).map(async (key) => Number(await admin.ttl(key))))
  t.ok(ttls.length > 0 && ttls.every((ttl) => ttl > 500), `the draw renewed the pool: ${ttls.length} reservations, each with its TTL set again (the lowest ${Math.min(...ttls)} s)`)
})

t.test('redis storage: the pool\'s reservations are renewed (their TTL set again), one another process took leaves the pool', async (t) => {
  const redis = await TestRedis.start(t)
  const admin = redis.client(t)
  const store = await RedisProfileStorage.open({ client: await appClient(t, redis), maxProfiles: 50, maxAgeMs: 60_000, log: quiet })
  t.teardown(() => store.close())
  const keys = await reservationKeys(admin)
  for (const key of keys) await admin.expire(key, 5)
  // one expired and taken by another process meanwhile
  const [taken] = keys
  await admin.set(taken, 'r:another-process')
  await store.renewPool()
  const ttls = await Promise.all(keys.slice(1).map(async (key) => Number(await admin.ttl(key))))
  t.ok(ttls.every((ttl) => ttl > 590), 'every reservation still its own has its TTL again')
  const drawn = new Set<string>()
  for (let token = store.reserveToken(); token !== undefined && drawn.size < keys.length; token = store.reserveToken()) drawn.add(token)
  t.notOk(drawn.has(taken.slice(-6)), 'the token another process holds is never drawn')
})

t.test('the app with redis storage: Redis down never fails a request, drops are counted and shown, saves resume when it is back', async (t) => {
  const redis = await TestRedis.start(t)
  const client = await appClient(t, redis)
  const clock = new ManualClock()
  const app = await buildApp({ debug: true, clock, profiler: { storage: 'redis', redis: { client, commandTimeout: 300 }, saveBudget: 1 } })
  t.teardown(() => app.close())
  const profiler = profilerOf(app)

  const before = await app.inject({ url: '/hello/before', headers: { host } })
  await profiler.settled()
  const token = String(before.headers['x-debug-token'])
  t.equal((await app.inject({ url: `/_profiler/${token}`, headers: { host } })).statusCode, 200)
  t.match((await app.inject({ url: `/_profiler/${token}`, headers: { host } })).body, '/hello/before')

  await redis.stop()
  const statuses: number[] = []
  for (let i = 0; i < 300; i++) statuses.push((await app.inject({ url: `/hello/${i}`, headers: { host } })).statusCode)
  await profiler.settled()
  t.same([...new Set(statuses)], [200], '300 requests while Redis is down: every one answered 200')
  t.ok(profiler.dropped >= 1, `profiles dropped and counted (${profiler.dropped})`)
  const search = await app.inject({ url: '/_profiler/', headers: { host } })
  t.equal(search.statusCode, 503, 'the profiler pages say the storage is unavailable')
  t.match(search.body, 'The profiler storage (redis) is unavailable')

  await redis.start()
  // the client reconnects by itself; the pool refills at the next draw after the retry delay
  if (client.status !== 'ready') await once(client, 'ready')
  const storage = profiler.storage as RedisProfileStorage
  const early = await app.inject({ url: '/hello/early', headers: { host } })
  t.equal(early.statusCode, 200)
  t.equal(early.headers['x-debug-token'], undefined, 'within the retry delay after a failed reservation: not profiled')
  await storage.refilled()
  t.equal((await app.inject({ url: '/hello/early', headers: { host } })).headers['x-debug-token'], undefined, 'no reservation was tried')
  clock.advance(RETRY_AFTER_MS)
  const first = await app.inject({ url: '/hello/after', headers: { host } })
  t.equal(first.statusCode, 200)
  t.equal(first.headers['x-debug-token'], undefined, 'the delay is over: this draw starts a reservation')
  await storage.refilled()
  const res = await app.inject({ url: '/hello/after', headers: { host } })
  t.equal(res.statusCode, 200)
  const resumed = res.headers['x-debug-token']
  t.match(resumed, /^[0-9a-f]{6}$/, 'the next request has a token')
  await profiler.settled()
  t.ok(await profiler.storage.load(String(resumed)), 'its profile is stored again without a restart')
  const page = await app.inject({ url: `/_profiler/${resumed}`, headers: { host } })
  t.equal(page.statusCode, 200)
  const dropped = await app.inject({ url: '/_profiler/', headers: { host } })
  t.match(dropped.body, /id="dropped">\d+ profiles were not stored by this process: \d+ without a token: the storage could not reserve one/, 'the search page shows the drops, with their real reason')
})

t.test('redis storage options: a client is required, and an unreachable Redis fails register clearly', async (t) => {
  await t.rejects(buildApp({ debug: true, profiler: { storage: 'redis' } }), { code: 'KERNEL_INVALID_OPTIONS', message: /profiler\.redis\.client/ })
  const client = new Redis(1, '127.0.0.1', { enableOfflineQueue: false, lazyConnect: true, maxRetriesPerRequest: 0 })
  client.on('error', () => undefined)
  t.teardown(() => { client.disconnect() })
  await t.rejects(buildApp({ debug: true, profiler: { storage: 'redis', redis: { client } } }), { code: 'KERNEL_REDIS_UNAVAILABLE', message: /the profiler cannot reach Redis/ })
})

t.test('redis storage: a Redis that does not answer fails each call at its time bound', async (t) => {
  const redis = await TestRedis.start(t)
  const admin = redis.client(t)
  // no client-side timeout: the storage's own bound must hold
  const client = new Redis(redis.url, { enableOfflineQueue: false, lazyConnect: true })
  client.on('error', () => undefined)
  t.teardown(() => { client.disconnect() })
  await client.connect()
  const store = await RedisProfileStorage.open({ client, maxProfiles: 10, maxAgeMs: 60_000, commandTimeoutMs: 100, log: quiet })
  t.teardown(() => store.close())
  const profile = reservedProfile(store)
  // asleep far longer than the 100 ms bound, so that a loaded machine still sees both calls fail
  const sleeping = admin.call('DEBUG', 'SLEEP', '3')
  await t.rejects(store.save(profile), { code: 'KERNEL_REDIS_TIMEOUT' })
  await t.rejects(store.find(), { code: 'KERNEL_REDIS_TIMEOUT' })
  await sleeping
})

t.test('a Redis outage is logged once at WARN with its cause, its recovery once at INFO; the pages\' 503s are not uncaught errors', async (t) => {
  const redis = await TestRedis.start(t)
  const client = await appClient(t, redis)
  const lines: Array<{ level: number, msg: string, err?: { message: string } }> = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const app = await buildApp({ debug: true, profiler: { storage: 'redis', redis: { client, commandTimeout: 300 } } }, { logger: { level: 'info', stream } })
  t.teardown(() => app.close())
  const about = (pattern: RegExp) => lines.filter((line) => pattern.test(line.msg))
  t.equal((await app.inject({ url: '/_profiler/', headers: { host } })).statusCode, 200)

  await redis.stop()
  for (const url of ['/_profiler/', '/_profiler/latest', '/_profiler/', '/_profiler/abcdef']) {
    t.equal((await app.inject({ url, headers: { host } })).statusCode, 503, url)
  }
  const down = about(/profiler storage \(redis\) is unavailable: .+; the profiler pages answer 503 until it answers again/)
  t.equal(down.length, 1, 'one warning for the outage')
  t.equal(down[0]?.level, 40)
  t.ok(down[0]?.err?.message, 'with its cause')
  t.same(lines.filter((line) => line.level >= 50), [], 'no error line: no "Uncaught exception" per page')

  await redis.start()
  // the client reconnects by itself
  if (client.status !== 'ready') await once(client, 'ready')
  t.equal((await app.inject({ url: '/_profiler/', headers: { host } })).statusCode, 200, 'the pages answer again')
  await app.inject({ url: '/_profiler/', headers: { host } })
  const up = about(/profiler storage \(redis\) answers again/)
  t.equal(up.length, 1, 'one line for the recovery')
  t.equal(up[0]?.level, 30)
})

t.test('redis storage under overload: one call at a time, later turns wait in up to maxBatchesWaiting batches, and beyond that a batch is dropped whole and counted', async (t) => {
  const redis = await TestRedis.start(t)
  // no client-side timeout, and a long bound of the storage's own: the call waits for Redis
  const client = new Redis(redis.url, { enableOfflineQueue: false, lazyConnect: true })
  client.on('error', () => undefined)
  t.teardown(() => { client.disconnect() })
  await client.connect()
  const store = await RedisProfileStorage.open({ client, maxProfiles: 1000, maxAgeMs: 60_000, commandTimeoutMs: 60_000, log: quiet, maxBatchesWaiting: 2 })
  t.teardown(() => store.close())
  // tokens reserved while Redis answers
  const tokens: string[] = []
  while (tokens.length < 560) {
    const token = store.reserveToken()
    if (token === undefined) await store.refilled()
    else tokens.push(token)
  }
  const pid = redis.pid!
  process.kill(pid, 'SIGSTOP')
  t.teardown(() => { try { process.kill(pid, 'SIGCONT') } catch {} })

  /** Saves `count` profiles in one turn of the event loop, and lets the turn end; their outcomes, once settled. */
  const turn = async (count: number): Promise<{ outcomes: Promise<string[]> }> => {
    const saves = tokens.splice(0, count).map(async (token) => await store.save(fakeProfile({ token })).then(() => 'stored', (error: { code: string }) => error.code))
    await new Promise((resolve) => setImmediate(resolve))
    return { outcomes: Promise.all(saves) }
  }
  const sent = await turn(1)
  const firstWaiting = await turn(256)
  const secondWaiting = await turn(256)
  t.equal(store.droppedBatches, 0, 'one call unanswered and two batches waiting: nothing dropped yet')
  const dropped = await turn(20)
  const droppedToo = await turn(20)
  t.equal(store.droppedBatches, 2, 'then each turn\'s saves are dropped, as a batch')
  t.equal(store.droppedProfiles, 40)
  t.same([...new Set(await dropped.outcomes), ...new Set(await droppedToo.outcomes)], ['KERNEL_PROFILES_DROPPED', 'KERNEL_PROFILES_DROPPED'], 'every save of a dropped batch is refused at once, while Redis is still stopped')

  process.kill(pid, 'SIGCONT')
  t.same([...new Set([...await sent.outcomes, ...await firstWaiting.outcomes, ...await secondWaiting.outcomes])], ['stored'], 'once Redis answers, the call and the waiting batches are stored, whole')
  t.equal(store.size, 513)
  const after = await turn(5)
  t.same(await after.outcomes, ['stored', 'stored', 'stored', 'stored', 'stored'], 'and the next saves are taken again')
  t.equal(store.droppedBatches, 2)
})

t.test('profiles the previous version stored in Redis are read; a body of an older format is refused with a logged message, never a 500', async (t) => {
  const redis = await TestRedis.start(t)
  const admin = redis.client(t)
  const client = await appClient(t, redis)
  const lines: Array<{ msg: string, token?: string }> = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const app = await buildApp({ debug: true, profiler: { storage: 'redis', redis: { client } } }, { logger: { level: 'warn', stream } })
  t.teardown(() => app.close())
  // as the previous version wrote them: the body a JSON string, the index member the token and the summary's JSON
  const memoryApp = await buildApp({ debug: true })
  t.teardown(() => memoryApp.close())
  const real = await memoryApp.kernelProfiler.profileOf(await memoryApp.inject({ url: '/hello/earlier', headers: { host } }))
  const earlier = { ...real, token: fakeProfile().token }
  const older = { ...fakeProfile({ url: 'http://example.test/older' }), version: 1 }
  for (const profile of [earlier, older]) {
    await admin.set(`fastify-kernel:{profiler}:p:${profile.token}`, JSON.stringify(profile), 'EX', 600)
    const { token, method, url, statusCode, ip, time, duration } = profile
    await admin.zadd('fastify-kernel:{profiler}:index', time, token + JSON.stringify({ token, method, url, statusCode, ip, time, duration }))
  }
  const page = await app.inject({ url: `/_profiler/${earlier.token}`, headers: { host } })
  t.equal(page.statusCode, 200)
  t.match(page.body, '/hello/earlier')
  t.match((await app.inject({ url: '/_profiler/', headers: { host } })).body, earlier.token, 'listed by the search page')
  const refused = await app.inject({ url: `/_profiler/${older.token}`, headers: { host } })
  t.equal(refused.statusCode, 200)
  t.match(refused.body, `Token "${older.token}" not found.`)
  t.ok(lines.some((line) => line.msg === 'fastify-kernel: a profile in Redis is not readable; answered as not found' && line.token === older.token), 'and logged')
})

t.test('redis storage: the size a search page shows counts what other processes stored since (never "2 shown, 1 stored")', async (t) => {
  const redis = await TestRedis.start(t)
  const server = await RedisProfileStorage.open({ client: await appClient(t, redis), maxProfiles: 100, maxAgeMs: 60_000, log: quiet })
  const worker = await RedisProfileStorage.open({ client: await appClient(t, redis), maxProfiles: 100, maxAgeMs: 60_000, log: quiet })
  t.teardown(async () => { await server.close(); await worker.close() })
  await server.save(reservedProfile(server))
  t.equal(server.size, 1)
  // a worker process (a console command, a BullMQ worker) stores into the same index
  await worker.save(reservedProfile(worker, { kind: 'command', name: 'mail:send', method: 'COMMAND', statusCode: 1 }))
  await worker.save(reservedProfile(worker, { kind: 'job', name: 'emails:welcome', method: 'JOB', statusCode: 0 }))
  const found = await server.find({})
  t.equal(found.length, 3, 'the search finds the three')
  t.equal(server.size, 3, 'and the size read after it counts them too')
})
