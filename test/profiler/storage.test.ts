import t from 'tap'
import type { Test } from 'tap'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryProfileStorage } from '../../src/profiler/storage/memory.js'
import { FileProfileStorage } from '../../src/profiler/storage/file.js'
import type { Profile } from '../../src/profiler/profile.js'
import type { ProfileStorage } from '../../src/profiler/storage/storage.js'
import { profilerOf, buildApp } from '../helpers.js'
import { fakeProfileMaker, host } from './helpers.js'
import { ManualClock } from '../clock.js'

const fakeProfile = fakeProfileMaker(0x100000)

function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'profiler-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

async function stored (store: ProfileStorage, token: string): Promise<boolean> {
  return (await store.find({ limit: 1_000_000 })).some((summary) => summary.token === token)
}

function collectingLog (): { warn: (fields: object, message: string) => void, messages: string[] } {
  const messages: string[] = []
  return { warn: (_fields, message) => { messages.push(message) }, messages }
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

t.test('file storage: one file per profile plus an index; reopened, it finds them again', async (t) => {
  const dir = tempDir(t)
  const log = collectingLog()
  const store = await FileProfileStorage.open(dir, { maxProfiles: 10, maxAgeMs: 60_000 }, log)
  const a = fakeProfile({ statusCode: 500 })
  const b = fakeProfile()
  await store.save(a)
  await store.save(b)
  t.same(readdirSync(dir).sort(), ['.lock', '.owner.json', `${a.token}.json`, `${b.token}.json`, 'index.jsonl'].sort(), 'no temporary file is left (the lock is held while open)')
  t.same(await store.load(a.token), a)
  t.same((await store.find({ status: '500' })).map((s) => s.token), [a.token])
  await store.close()

  const again = await FileProfileStorage.open(dir, { maxProfiles: 10, maxAgeMs: 60_000 }, log)
  t.teardown(() => again.close())
  t.same((await again.find()).map((s) => s.token).sort(), [a.token, b.token].sort())
  t.same(await again.load(b.token), b)
  t.same(log.messages, [])
})

t.test('file storage: a truncated or corrupt file reads as not found, and is logged', async (t) => {
  const dir = tempDir(t)
  const log = collectingLog()
  const store = await FileProfileStorage.open(dir, { maxProfiles: 10, maxAgeMs: 60_000 }, log)
  t.teardown(() => store.close())
  const truncated = fakeProfile()
  const corrupt = fakeProfile()
  await store.save(truncated)
  await store.save(corrupt)
  const file = join(dir, `${truncated.token}.json`)
  truncateSync(file, Math.floor(readFileSync(file).length / 2))
  writeFileSync(join(dir, `${corrupt.token}.json`), JSON.stringify({ ...corrupt, token: 'ffffff' }))
  t.equal(await store.load(truncated.token), undefined)
  t.equal(await store.load(corrupt.token), undefined)
  t.equal(log.messages.filter((m) => /corrupt or truncated/.test(m)).length, 2)
  t.equal(await store.load('../../etc/passwd'), undefined, 'a token is never a path')
})

t.test('file storage: the app answers a truncated profile with "not found", never a 500', async (t) => {
  const dir = tempDir(t)
  const app = await buildApp({ debug: true, profiler: { storage: 'file', directory: dir } })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/about', headers: { host } })
  const token = String(res.headers['x-debug-token'])
  await app.kernelProfiler!.settled()
  t.equal((await app.inject({ url: `/_profiler/${token}`, headers: { host } })).statusCode, 200)
  truncateSync(join(dir, `${token}.json`), 10)
  const page = await app.inject({ url: `/_profiler/${token}`, headers: { host } })
  t.equal(page.statusCode, 200)
  t.match(page.body, `Token "${token}" not found.`)
})

t.test('file storage: bounded by count and age under sustained saving, the oldest purged', async (t) => {
  const dir = tempDir(t)
  const store = await FileProfileStorage.open(dir, { maxProfiles: 20, maxAgeMs: 60_000 }, collectingLog())
  const saved: Profile[] = []
  // concurrent saves, as under load
  for (let round = 0; round < 10; round++) {
    const batch = Array.from({ length: 30 }, () => fakeProfile())
    saved.push(...batch)
    await Promise.all(batch.map((p) => store.save(p)))
    t.ok(store.size <= 20, `round ${round}: ${store.size} kept`)
  }
  await store.close() // the purged profiles' files are deleted by then
  const files = readdirSync(dir).filter((name) => /^[0-9a-f]{6}\.json$/.test(name))
  t.equal(files.length, 20, 'the folder holds as many files as the store keeps')
  const indexLines = readFileSync(join(dir, 'index.jsonl'), 'utf8').trim().split('\n').length
  t.ok(indexLines <= 2 * 20 + 64 + 30, `the index is compacted (${indexLines} lines)`)
  const reopened = await FileProfileStorage.open(dir, { maxProfiles: 20, maxAgeMs: 60_000 }, collectingLog())
  t.teardown(() => reopened.close())
  t.equal(reopened.size, 20)
  t.notOk(await stored(reopened, saved[0].token), 'the oldest is gone')
  t.ok(await stored(reopened, saved.at(-1)!.token), 'the newest is kept')

  const agedDir = tempDir(t)
  const clock = new ManualClock()
  const aged = await FileProfileStorage.open(agedDir, { maxProfiles: 20, maxAgeMs: 40_000 }, collectingLog(), { clock })
  t.teardown(() => aged.close())
  const old = fakeProfile({ time: clock.now() })
  await aged.save(old)
  clock.advance(40_000)
  t.same(await aged.load(old.token), old, 'as old as maxAge: kept')
  clock.advance(1)
  t.equal(await aged.load(old.token), undefined, 'expired profiles read as not found')
  t.ok(existsSync(join(agedDir, `${old.token}.json`)), 'its file is still there')
  await aged.save(fakeProfile({ time: clock.now() }))
  t.notOk(await stored(aged, old.token), 'and are purged')
  await aged.close()
  t.notOk(existsSync(join(agedDir, `${old.token}.json`)), 'with their file')
})

t.test('file storage: on opening, files the index does not know and temporary files are removed', async (t) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'abcdef.json'), '{}')
  writeFileSync(join(dir, '.abcdef.1.1.tmp'), '{"half')
  writeFileSync(join(dir, 'index.jsonl'), '{"token":"123456","method":"GET","url":"u","statusCode":200,"ip":"","time":1,"duration":1}\n{"torn line')
  const store = await FileProfileStorage.open(dir, { maxProfiles: 10, maxAgeMs: 60_000 }, collectingLog())
  t.teardown(() => store.close())
  t.same(readdirSync(dir).filter((name) => !name.startsWith('.lock') && name !== '.owner.json'), ['index.jsonl'])
  t.equal(store.size, 0, 'an entry without its file is dropped')
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

const limits = { maxProfiles: 50, maxAgeMs: 60_000 }

t.test('file storage: a second process on the same folder is refused, naming the holder; a stale lock is taken over', async (t) => {
  const dir = tempDir(t)
  const first = await FileProfileStorage.open(dir, limits, collectingLog())
  const kept = fakeProfile()
  await first.save(kept)
  await t.rejects(FileProfileStorage.open(dir, limits, collectingLog()), {
    code: 'KERNEL_PROFILER_FOLDER_IN_USE',
    message: new RegExp(`already used by process ${process.pid} on host .*Redis storage`)
  })
  t.ok(existsSync(join(dir, `${kept.token}.json`)), 'the refused process deleted nothing')
  await first.close()

  const second = await FileProfileStorage.open(dir, limits, collectingLog())
  t.same(await second.load(kept.token), kept, 'once the first has closed, the folder opens with its profiles')
  await second.close()

  // a crashed owner leaves its lock behind; its mtime stops moving, and it goes stale
  mkdirSync(join(dir, '.lock'))
  const old = new Date(Date.now() - 60_000)
  utimesSync(join(dir, '.lock'), old, old)
  const third = await FileProfileStorage.open(dir, limits, collectingLog())
  t.teardown(() => third.close())
  t.same(await third.load(kept.token), kept)
})

t.test('file storage: index lines a failed append could not write are kept, retried, and the profiles survive a restart', async (t) => {
  const dir = tempDir(t)
  const log = collectingLog()
  const store = await FileProfileStorage.open(dir, limits, log)
  const before = fakeProfile()
  await store.save(before)
  // the index cannot be appended to (as on a full disk): a folder stands in its place
  rmSync(join(dir, 'index.jsonl'))
  mkdirSync(join(dir, 'index.jsonl'))
  const during = Array.from({ length: 5 }, () => fakeProfile())
  for (const p of during) await store.save(p)
  t.equal(log.messages.filter((m) => /cannot write the profiler index/.test(m)).length, 1, 'one warning for the outage, not one per save')
  for (const p of during) t.same(await store.load(p.token), p, 'readable while the index is behind')
  await store.close()

  rmSync(join(dir, 'index.jsonl'), { recursive: true })
  const reopened = await FileProfileStorage.open(dir, limits, collectingLog())
  t.teardown(() => reopened.close())
  for (const p of [before, ...during]) t.same(await reopened.load(p.token), p, 'a profile the index lost is read back, not deleted')
  t.equal(reopened.size, 6)

  // the disk recovers while the process runs: the pending lines are written at the next flush
  const dir2 = tempDir(t)
  const log2 = collectingLog()
  const live = await FileProfileStorage.open(dir2, limits, log2)
  rmSync(join(dir2, 'index.jsonl'))
  mkdirSync(join(dir2, 'index.jsonl'))
  const lost = fakeProfile()
  await live.save(lost)
  // save settles when the file is written; its index line follows on the writer's next step
  await live.idle()
  t.equal(log2.messages.length, 1, 'the append failed')
  rmSync(join(dir2, 'index.jsonl'), { recursive: true })
  const after = fakeProfile()
  await live.save(after)
  await live.close()
  const lines = readFileSync(join(dir2, 'index.jsonl'), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l).token)
  t.same(lines, [lost.token, after.token], 'the retried lines are in the index')
  t.match(log2.messages, ['fastify-kernel: cannot write the profiler index; its lines are kept and retried', 'fastify-kernel: the profiler index is written again'])
})

t.test('file storage: a folder deleted under the storage is created again', async (t) => {
  const dir = tempDir(t)
  const log = collectingLog()
  const store = await FileProfileStorage.open(dir, limits, log)
  t.teardown(() => store.close())
  await store.save(fakeProfile())
  rmSync(dir, { recursive: true, force: true })
  const next = fakeProfile()
  await store.save(next)
  t.ok(existsSync(join(dir, `${next.token}.json`)), 'the profile is on disk again')
  t.same(await store.load(next.token), next)
  t.ok(existsSync(join(dir, '.lock')), 'and the folder is locked again')
  t.match(log.messages, ['fastify-kernel: the profiler folder was deleted; it is created again'])
})

t.test('file storage: wrong-shape profiles and future-dated index lines never give a 500', async (t) => {
  const dir = tempDir(t)
  // left by another version, or by hand: an index line dated far in the future (with its file)
  const future = fakeProfile({ token: 'fedcba', time: 8.64e15 })
  writeFileSync(join(dir, 'fedcba.json'), JSON.stringify(future))
  writeFileSync(join(dir, 'index.jsonl'), JSON.stringify({ token: 'fedcba', method: 'GET', url: 'u', statusCode: 200, ip: '', time: 8.64e15, duration: 1 }) + '\n')
  const app = await buildApp({ debug: true, profiler: { storage: 'file', directory: dir } })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/_profiler/latest', headers: { host } })).statusCode, 200)
  t.equal((await app.inject({ url: '/_profiler/', headers: { host } })).statusCode, 200)
  t.equal((await app.inject({ url: '/_profiler/fedcba', headers: { host } })).statusCode, 200)

  const res = await app.inject({ url: '/about', headers: { host } })
  const token = String(res.headers['x-debug-token'])
  await app.kernelProfiler!.settled()
  const profile = JSON.parse(readFileSync(join(dir, `${token}.json`), 'utf8')) as Record<string, unknown> & { collected: Record<string, Record<string, unknown>> }
  const collected = profile.collected
  const wrongs = [
    { collected: { ...collected, request: 'not an object' } },
    { collected: { ...collected, logs: {} } },
    { collected: { ...collected, time: null } },
    { collected: { ...collected, events: { entries: 'x' } } },
    { collected: [] },
    { collected: { ...collected, request: { ...collected.request, response: { headers: 7 } } } },
    { version: 1 }
  ]
  for (const wrong of wrongs) {
    writeFileSync(join(dir, `${token}.json`), JSON.stringify({ ...profile, ...wrong }))
    for (const url of [`/_profiler/${token}`, ...['request', 'logs', 'time', 'events', 'routing', 'exception'].map((p) => `/_profiler/${token}?panel=${p}`), '/_profiler/latest']) {
      const page = await app.inject({ url, headers: { host } })
      t.equal(page.statusCode, 200, `${JSON.stringify(wrong)} ${url}`)
    }
  }
  writeFileSync(join(dir, `${token}.json`), '[1, 2, 3]')
  t.match((await app.inject({ url: `/_profiler/${token}`, headers: { host } })).body, `Token "${token}" not found.`)
})
