import t from 'tap'
import type { Test } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryProfileStorage } from '../../src/profiler/storage/memory.js'
import type { Profile } from '../../src/profiler/profile.js'
import { profilerOf, buildApp } from '../helpers.js'
import { fakeProfileMaker, host } from './helpers.js'
import { ManualClock } from '../clock.js'

const fakeProfile = fakeProfileMaker(0x100000)

function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'profiler-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

t.test('memory storage: save, load a copy, find with filters, purge', async (t) => {
  const store = new MemoryProfileStorage({ maxProfiles: 10, maxAgeMs: 60_000, maxBytes: 1 << 20 })
  const a = fakeProfile({ method: 'POST', statusCode: 404, time: Date.now() - 10 })
  const b = fakeProfile()
  await store.save(a)
  await store.save(b)
  t.ok((await store.find()).some((s) => s.token === a.token))
  t.same(await store.load(a.token), a)
  const loaded = await store.load(a.token)
  loaded!.method = 'CHANGED'
  t.equal((await store.load(a.token))!.method, 'POST', 'a loaded profile is a copy')
  t.same((await store.find()).map((s) => s.token), [b.token, a.token], 'newest first')
  const [c, d] = [fakeProfile({ time: b.time }), fakeProfile({ time: b.time })]
  await store.save(c)
  await store.save(d)
  t.same((await store.find()).map((s) => s.token), [d.token, c.token, b.token, a.token], 'of the same millisecond, the last saved first')
  t.same((await store.find({ method: 'post' })).map((s) => s.token), [a.token])
  t.same((await store.find({ status: '4xx' })).map((s) => s.token), [a.token])
  t.equal(await store.load('zzzzzz'), undefined)
  await store.purge()
  t.equal(store.size, 0)
  t.equal(await store.load(a.token), undefined)
})

t.test('memory storage: bounded by count (oldest purged first), bytes and age', async (t) => {
  const store = new MemoryProfileStorage({ maxProfiles: 5, maxAgeMs: 60_000, maxBytes: 1 << 20 })
  const saved: Profile[] = []
  for (let i = 0; i < 50; i++) {
    const p = fakeProfile()
    saved.push(p)
    await store.save(p)
    // reading old profiles must not keep them alive
    await store.load(saved[0].token)
    t.ok(store.size <= 5)
  }
  t.same((await store.find()).map((s) => s.token).sort(), saved.slice(-5).map((p) => p.token).sort(), 'the five newest are kept')

  // long runs (the order of keeping is cut as it goes) and a profile saved again under its token
  const long = new MemoryProfileStorage({ maxProfiles: 10, maxAgeMs: 60_000, maxBytes: 1 << 20 })
  const all: Profile[] = []
  const base = Date.now() - 10_000
  for (let i = 0; i < 5000; i++) {
    const p = fakeProfile({ time: base + i })
    all.push(p)
    await long.save(p)
  }
  t.equal(long.size, 10)
  t.same((await long.find()).map((s) => s.token), all.slice(-10).reverse().map((p) => p.token), 'the ten newest, newest first, after 5,000')
  const again = { ...all[4991]!, time: base + 5000 }
  await long.save(again)
  t.equal(long.size, 10, 'saved again: still one entry')
  t.equal((await long.find())[0]!.token, again.token, 'and the newest')
  await long.save(fakeProfile({ time: base + 5001 }))
  t.equal(long.size, 10)
  t.notOk((await long.find()).some((s) => s.token === all[4990]!.token), 'the oldest left')
  t.ok((await long.find()).some((s) => s.token === again.token), 'not the one saved again')

  const small = new MemoryProfileStorage({ maxProfiles: 1000, maxAgeMs: 60_000, maxBytes: 20_000 })
  for (let i = 0; i < 100; i++) await small.save(fakeProfile())
  const size = JSON.stringify(fakeProfile()).length
  t.ok(small.size <= Math.ceil(20_000 / size), `at most ${Math.ceil(20_000 / size)} profiles fit in 20 kB (${small.size})`)

  const clock = new ManualClock()
  const shortLived = new MemoryProfileStorage({ maxProfiles: 10, maxAgeMs: 30_000, maxBytes: 1 << 20 }, clock)
  const old = fakeProfile()
  await shortLived.save(old)
  clock.advance(30_000)
  t.same(await shortLived.load(old.token), old, 'as old as maxAge: kept')
  clock.advance(1)
  t.equal(await shortLived.load(old.token), undefined, 'older: expired')
  t.same(await shortLived.find(), [])
})

t.test('the profiler never lets storage failures reach the request', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  profilerOf(app).storage.save = async () => { throw new Error('disk full') }
  const res = await app.inject({ url: '/about', headers: { host } })
  t.equal(res.statusCode, 200)
  t.equal(res.body, 'about')
  await app.kernelProfiler!.settled()
})

t.test('a folder the file storage cannot use fails register with its name', async (t) => {
  const dir = tempDir(t)
  const blocker = join(dir, 'a-file')
  writeFileSync(blocker, 'not a folder')
  await t.rejects(buildApp({ debug: true, profiler: { storage: 'file', directory: join(blocker, 'profiles') } }), {
    code: 'KERNEL_INVALID_OPTIONS',
    message: /the profiler cannot use its folder ".*a-file\/profiles"/
  })
})
