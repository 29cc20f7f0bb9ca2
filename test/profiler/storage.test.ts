import t from 'tap'
import type { Test } from 'tap'
import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryProfileStorage } from '../../src/profiler/storage/memory.js'
import { FileProfileStorage } from '../../src/profiler/storage/file.js'
import type { Profile } from '../../src/profiler/profile.js'
import { buildApp } from '../helpers.js'
import { host } from './helpers.js'

let counter = 0
function fakeProfile (overrides: Partial<Profile> = {}): Profile {
  const token = (0x100000 + counter++).toString(16)
  return {
    version: 1, token, method: 'GET', url: `http://example.test/p/${token}`, statusCode: 200, ip: '127.0.0.1', time: Date.now(), duration: 1,
    aborted: false,
    request: { method: 'GET', url: '', path: '/', query: {}, protocol: 'http', httpVersion: '1.1', ip: '127.0.0.1', headers: [], cookies: [], body: null, attributes: [], route: null },
    response: null,
    routing: { outcome: 'none', route: null, redirect: null, allow: [], attemptedPath: null, trace: null },
    exception: null,
    events: { tracing: true, entries: [] },
    logs: [],
    performance: { totalMs: 1, timeToFirstByteMs: 1, heapUsedStart: 1, heapUsedEnd: 1 },
    collected: {},
    ...overrides
  }
}

function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'profiler-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
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
  t.ok(store.has(a.token))
  t.same(await store.load(a.token), a)
  const loaded = await store.load(a.token)
  loaded!.method = 'CHANGED'
  t.equal((await store.load(a.token))!.method, 'POST', 'a loaded profile is a copy')
  t.same((await store.find()).map((s) => s.token), [b.token, a.token], 'newest first')
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

  const shortLived = new MemoryProfileStorage({ maxProfiles: 10, maxAgeMs: 30, maxBytes: 1 << 20 })
  const old = fakeProfile()
  await shortLived.save(old)
  await new Promise((resolve) => setTimeout(resolve, 60))
  t.equal(await shortLived.load(old.token), undefined, 'expired')
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
  t.same(readdirSync(dir).sort(), [`${a.token}.json`, `${b.token}.json`, 'index.jsonl'].sort(), 'no temporary file is left')
  t.same(await store.load(a.token), a)
  t.same((await store.find({ status: '500' })).map((s) => s.token), [a.token])
  await store.close()

  const again = await FileProfileStorage.open(dir, { maxProfiles: 10, maxAgeMs: 60_000 }, log)
  t.teardown(() => again.close())
  t.ok(again.has(a.token) && again.has(b.token))
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
  await store.close()
  await new Promise((resolve) => setTimeout(resolve, 50)) // unlinks are not awaited by save
  const files = readdirSync(dir).filter((name) => name.endsWith('.json'))
  t.equal(files.length, 20, 'the folder holds as many files as the store keeps')
  const indexLines = readFileSync(join(dir, 'index.jsonl'), 'utf8').trim().split('\n').length
  t.ok(indexLines <= 2 * 20 + 64 + 30, `the index is compacted (${indexLines} lines)`)
  const reopened = await FileProfileStorage.open(dir, { maxProfiles: 20, maxAgeMs: 60_000 }, collectingLog())
  t.teardown(() => reopened.close())
  t.equal(reopened.size, 20)
  t.notOk(reopened.has(saved[0].token), 'the oldest is gone')
  t.ok(reopened.has(saved.at(-1)!.token), 'the newest is kept')

  const agedDir = tempDir(t)
  const aged = await FileProfileStorage.open(agedDir, { maxProfiles: 20, maxAgeMs: 40 }, collectingLog())
  t.teardown(() => aged.close())
  const old = fakeProfile()
  await aged.save(old)
  await new Promise((resolve) => setTimeout(resolve, 80))
  t.equal(await aged.load(old.token), undefined, 'expired profiles read as not found')
  await aged.save(fakeProfile())
  t.notOk(aged.has(old.token), 'and are purged')
})

t.test('file storage: on opening, files the index does not know and temporary files are removed', async (t) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'abcdef.json'), '{}')
  writeFileSync(join(dir, '.abcdef.1.1.tmp'), '{"half')
  writeFileSync(join(dir, 'index.jsonl'), '{"token":"123456","method":"GET","url":"u","statusCode":200,"ip":"","time":1,"duration":1}\n{"torn line')
  const store = await FileProfileStorage.open(dir, { maxProfiles: 10, maxAgeMs: 60_000 }, collectingLog())
  t.teardown(() => store.close())
  t.same(readdirSync(dir), ['index.jsonl'])
  t.equal(store.size, 0, 'an entry without its file is dropped')
})

t.test('the profiler never lets storage failures reach the request', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  app.kernelProfiler!.storage.save = async () => { throw new Error('disk full') }
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
