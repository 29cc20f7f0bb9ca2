/**
 * The file storage's layout: segments appended once a turn, rotated whole by count and by age,
 * the index rebuilt from them after a restart, a torn last line skipped, a failed write, a
 * folder of the previous layouts (a file per profile; segments of a single writer) read until
 * its profiles leave the bounds, writers of one folder at once, the folder deleted under it.
 * The rules every storage keeps are the contract's (storage-contract.test.ts); processes
 * writing one folder, killed mid-write, are writer-slots.test.ts's.
 */
import t from 'tap'
import type { Test } from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { FileProfileStorage } from '../../src/profiler/storage/file.js'
import { FileProfileReader } from '../../src/profiler/storage/file-reader.js'
import { summarize } from '../../src/profiler/profile.js'
import type { Profile } from '../../src/profiler/profile.js'
import { buildApp } from '../helpers.js'
import { fakeProfileMaker, host } from './helpers.js'
import { ManualClock } from '../clock.js'
import { systemClock } from '../../src/clock.js'

const fakeProfile = fakeProfileMaker(0x700000)
const limits = { maxProfiles: 50, maxAgeMs: 60_000 }

function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'profiler-file-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function collectingLog (): { warn: (fields: object, message: string) => void, messages: string[] } {
  const messages: string[] = []
  return { warn: (_fields, message) => { messages.push(message) }, messages }
}

/** The segment files, by slot then number. */
function segments (dir: string): string[] {
  const key = (name: string): [string, number] => {
    const [slot, n] = name.includes('-') ? name.split('-') : ['', name]
    return [slot, parseInt(n)]
  }
  return readdirSync(join(dir, 'segments')).sort((a, b) => key(a)[0].localeCompare(key(b)[0]) || key(a)[1] - key(b)[1])
}

/** The writer slots held in the folder now (their locks). */
function heldSlots (dir: string): string[] {
  return readdirSync(join(dir, 'writers')).filter((name) => name.endsWith('.lock')).map((name) => name.slice(0, 2)).sort()
}

/** The slot of the one storage writing `dir`, and its segments' names. */
function slotOf (dir: string): { slot: string, segment: (n: number) => string } {
  const [slot] = heldSlots(dir)
  return { slot, segment: (n) => `${slot}-${n}.jsonl` }
}

/** Every whole line of a segment, parsed. */
function records (dir: string, segment: string): Array<{ s: { token: string }, p: Profile }> {
  return readFileSync(join(dir, 'segments', segment), 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { s: { token: string }, p: Profile })
}

/** Saves each profile and waits until it is on disk. */
async function saveAll (store: FileProfileStorage, profiles: Profile[]): Promise<void> {
  await Promise.all(profiles.map((profile) => store.save(profile)))
}

t.test('the saves of one turn go to disk in one write, as lines of a segment: the summary, then the profile', async (t) => {
  const dir = tempDir(t)
  const store = await FileProfileStorage.open(dir, limits, collectingLog())
  t.teardown(() => store.close())
  // every write of a file handle in this process, counted
  const probe = await open(join(dir, 'probe'), 'w')
  const prototype = Object.getPrototypeOf(probe) as { write: (...args: unknown[]) => Promise<unknown> }
  await probe.close()
  const write = prototype.write
  let writes = 0
  prototype.write = function (this: unknown, ...args: unknown[]) { writes++; return write.apply(this, args) }
  t.teardown(() => { prototype.write = write })

  const turn = Array.from({ length: 10 }, () => fakeProfile())
  await saveAll(store, turn)
  t.equal(writes, 1, 'ten saves of one turn: one write')
  const { slot, segment } = slotOf(dir)
  t.same(segments(dir), [segment(1)], 'a segment named after the writer\'s slot')
  t.match(store.reserveToken(), new RegExp(`^${slot}[0-9a-f]{4}$`), 'whose tokens begin with it')
  const lines = records(dir, segment(1))
  t.same(lines.map((line) => line.p), turn, 'each line holds its profile')
  t.same(lines.map((line) => line.s), turn.map(summarize), 'after its summary')
  t.same(readdirSync(dir).sort(), ['probe', 'segments', 'writers'], 'no file per profile, no index file')

  const next = fakeProfile({ url: 'http://example.test/ünïcødé ✓' })
  await store.save(next)
  t.equal(writes, 2, 'a save of a later turn: the next write')
  t.same(await store.load(next.token), next, 'read back by its offset (its bytes, not its characters)')
})

t.test('reopened, the index is rebuilt from the segments; the next write starts a new segment', async (t) => {
  const dir = tempDir(t)
  const log = collectingLog()
  const store = await FileProfileStorage.open(dir, limits, log)
  const saved = [fakeProfile({ statusCode: 500 }), fakeProfile(), fakeProfile()]
  await saveAll(store, saved.slice(0, 2))
  await store.save(saved[2])
  const [first] = segments(dir)
  await store.close()

  const again = await FileProfileStorage.open(dir, limits, log)
  t.teardown(() => again.close())
  t.equal(again.size, 3)
  t.same((await again.find({ limit: 10 })).map((s) => s.token).sort(), saved.map((p) => p.token).sort())
  t.same((await again.find({ status: '500' })).map((s) => s.token), [saved[0].token], 'with the summaries, filters work')
  for (const profile of saved) t.same(await again.load(profile.token), profile)
  const after = fakeProfile()
  await again.save(after)
  const [second] = segments(dir).filter((name) => name !== first)
  t.equal(segments(dir).length, 2, 'a segment of an earlier run is not appended to')
  t.same(records(dir, second).map((line) => line.s.token), [after.token])
  // the same token saved again by its writer: the later line is its profile, after a restart too
  const changed = { ...after, url: 'http://example.test/changed' }
  await again.save(changed)
  await again.close()
  const third = await FileProfileStorage.open(dir, limits, log)
  t.teardown(() => third.close())
  t.equal((await third.load(after.token))?.url, 'http://example.test/changed')
  t.equal(third.size, 4)
  t.same(log.messages, [])
})

t.test('rotation by count: a segment holds an eighth of maxProfiles, and is deleted whole once none of its profiles is kept', async (t) => {
  const dir = tempDir(t)
  const store = await FileProfileStorage.open(dir, { maxProfiles: 16, maxAgeMs: 60_000 }, collectingLog())
  const saved: Profile[] = []
  for (let i = 0; i < 41; i++) {
    const profile = fakeProfile()
    saved.push(profile)
    await store.save(profile)
    t.ok(store.size <= 16, `${store.size} kept`)
  }
  t.same((await store.find({ limit: 100 })).map((s) => s.token).sort(), saved.slice(-16).map((p) => p.token).sort(), 'the 16 newest are kept')
  const { segment } = slotOf(dir)
  await store.close() // the emptied segments' deletions are done by then
  const files = segments(dir)
  t.same(files, Array.from({ length: 9 }, (_, i) => segment(13 + i)), 'two profiles a segment: the 16 kept are in the last 9 segments (the last being filled)')
  const onDisk = files.flatMap((file) => records(dir, file).map((line) => line.s.token))
  t.same(onDisk, saved.slice(-17).map((p) => p.token), 'the disk holds the bound and less than a segment more')

  const reopened = await FileProfileStorage.open(dir, { maxProfiles: 16, maxAgeMs: 60_000 }, collectingLog())
  t.teardown(() => reopened.close())
  t.equal(reopened.size, 16, 'after a restart, the same bound')
  t.equal(await reopened.load(saved[24].token), undefined, 'a profile on disk beyond the bound is not read')
  t.same((await reopened.load(saved[40].token))?.token, saved[40].token)
})

t.test('rotation by age (an injected clock): a segment is closed after an eighth of maxAge, deleted once its profiles expired', async (t) => {
  const dir = tempDir(t)
  const clock = new ManualClock()
  const store = await FileProfileStorage.open(dir, { maxProfiles: 1000, maxAgeMs: 80_000 }, collectingLog(), { clock })
  const old = fakeProfile({ time: clock.now() })
  await store.save(old)
  clock.advance(9_999)
  const second = fakeProfile({ time: clock.now() })
  await store.save(second)
  const { slot, segment } = slotOf(dir)
  t.same(segments(dir), [segment(1)], 'younger than an eighth of maxAge: the same segment')
  clock.advance(1)
  const third = fakeProfile({ time: clock.now() })
  await store.save(third)
  t.same(segments(dir), [segment(1), segment(2)], 'then a new one')
  clock.advance(70_000)
  t.same(await store.load(old.token), old, 'as old as maxAge: kept')
  clock.advance(1)
  t.equal(await store.load(old.token), undefined, 'a millisecond older: expired')
  await store.save(fakeProfile({ time: clock.now() }))
  await store.close()
  t.same(segments(dir), [segment(1), segment(2), segment(3)], 'segment 1 still holds a kept profile (the second)')
  const reopened = await FileProfileStorage.open(dir, { maxProfiles: 1000, maxAgeMs: 80_000 }, collectingLog(), { clock })
  clock.advance(10_000)
  await reopened.save(fakeProfile({ time: clock.now() }))
  const { slot: now } = slotOf(dir)
  await reopened.close()
  // (the new writer takes a slot at random: the first one's again, or another)
  t.same(segments(dir).sort(), [segment(3), now === slot ? segment(4) : `${now}-1.jsonl`].sort(), 'after a restart and 10 s more, segments 1 and 2, whose profiles all expired, are deleted; the new writer appends to a segment of its own')
})

t.test('a torn last line (a crash while writing) and a corrupt line are skipped, once logged; the rest is read', async (t) => {
  const dir = tempDir(t)
  const store = await FileProfileStorage.open(dir, limits, collectingLog())
  const kept = [fakeProfile(), fakeProfile(), fakeProfile()]
  await saveAll(store, kept)
  const [written] = segments(dir)
  await store.close()
  const torn = fakeProfile()
  const line = JSON.stringify({ s: summarize(torn), p: torn })
  appendFileSync(join(dir, 'segments', written), 'not a record\n' + line.slice(0, line.length / 2))

  const log = collectingLog()
  const reopened = await FileProfileStorage.open(dir, limits, log)
  t.teardown(() => reopened.close())
  t.same(log.messages, ['fastify-kernel: profiler segments hold torn or corrupt lines (a crash while writing); they are skipped'])
  t.equal(reopened.size, 3)
  for (const profile of kept) t.same(await reopened.load(profile.token), profile)
  t.equal(await reopened.load(torn.token), undefined, 'the torn record is not found')
  const next = fakeProfile()
  await reopened.save(next)
  t.same(await reopened.load(next.token), next)
  t.equal(segments(dir).length, 2, 'nothing is appended after a torn line')
  t.ok(readFileSync(join(dir, 'segments', written), 'utf8').endsWith('not a record\n'), 'the torn line (its writer gone) is cut off')
  await reopened.close()
  const quiet = collectingLog()
  const third = await FileProfileStorage.open(dir, limits, quiet)
  t.teardown(() => third.close())
  t.same(quiet.messages, ['fastify-kernel: profiler segments hold torn or corrupt lines (a crash while writing); they are skipped'], 'the next process to open the folder says only the corrupt line, still there')
  t.equal(third.size, 4)
})

t.test('a record changed on disk reads as not found, logged; a token is never a path', async (t) => {
  const dir = tempDir(t)
  const log = collectingLog()
  const store = await FileProfileStorage.open(dir, limits, log)
  t.teardown(() => store.close())
  const [first, second, third] = [fakeProfile(), fakeProfile(), fakeProfile()]
  await saveAll(store, [first, second, third])
  const file = join(dir, 'segments', segments(dir)[0])
  const text = readFileSync(file, 'utf8')
  // the same length, so that the other records keep their offsets: a byte of the second's body, and the third's token
  const at = text.indexOf(`"p":{"version":2,"token":"${second.token}"`) + 10
  writeFileSync(file, text.slice(0, at) + '#' + text.slice(at + 1).replace(`"p":{"version":2,"token":"${third.token}"`, '"p":{"version":2,"token":"ffffff"'))
  t.same(await store.load(first.token), first)
  t.equal(await store.load(second.token), undefined)
  t.equal(await store.load(third.token), undefined, 'a profile of another token')
  t.equal(log.messages.filter((m) => /corrupt or truncated/.test(m)).length, 2)
  t.equal(await store.load('../../etc/passwd'), undefined)
})

t.test('the app answers a truncated segment with "not found", never a 500', async (t) => {
  const dir = tempDir(t)
  const app = await buildApp({ debug: true, profiler: { storage: 'file', directory: dir } })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/about', headers: { host } })
  const token = String(res.headers['x-debug-token'])
  await app.kernelProfiler.settled()
  t.equal((await app.inject({ url: `/_profiler/${token}`, headers: { host } })).statusCode, 200)
  truncateSync(join(dir, 'segments', segments(dir)[0]), 300)
  const page = await app.inject({ url: `/_profiler/${token}`, headers: { host } })
  t.equal(page.statusCode, 200)
  t.match(page.body, `Token "${token}" not found.`)
  t.equal((await app.inject({ url: '/_profiler/', headers: { host } })).statusCode, 200, 'the search page lists it still, without a 500')
})

t.test('a write that fails (the file size limit, as a full disk) rejects its batch, what it wrote is cut off; the next write starts another segment', async (t) => {
  const dir = tempDir(t)
  // a process of its own, whose files may not grow past 64 KiB (ulimit -f: EFBIG, not a signal, for Node)
  const fixture = resolve(import.meta.dirname, 'fixtures/size-limited-saves.mjs')
  const child = spawn('/bin/sh', ['-c', 'ulimit -f 64; exec "$0" "$@"', process.execPath, fixture, dir], { stdio: ['ignore', 'pipe', 'inherit'] })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const [code] = await once(child, 'exit') as [number]
  t.equal(code, 0, output)
  const outcome = JSON.parse(output) as { saved: string[], failed: Array<{ token: string, code: string }>, warnings: string[] }
  t.ok(outcome.failed.length > 0 && outcome.failed.every((failure) => failure.code === 'EFBIG'), `the batch that crossed the limit failed (${outcome.failed.length} saves rejected)`)
  t.ok(outcome.saved.length > outcome.failed.length, `the writes before and after it succeeded (${outcome.saved.length})`)
  t.ok(segments(dir).length >= 2, 'in a new segment after the failure')

  const log = collectingLog()
  const reopened = await FileProfileStorage.open(dir, { maxProfiles: 1000, maxAgeMs: 60_000 }, log)
  t.teardown(() => reopened.close())
  t.same((await reopened.find({ limit: 1000 })).map((s) => s.token).sort(), [...outcome.saved].sort(), 'every profile whose save succeeded is read back, none whose save failed')
  t.same(log.messages, [], 'no torn line is left')
})

/** A real profile (from the app, through a memory storage), as an earlier version stored it. */
async function realProfile (t: Test): Promise<Profile> {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  return await app.kernelProfiler.profileOf(await app.inject({ url: '/hello/legacy', headers: { host } }))
}

/**
 * A folder as the previous version wrote it: a `<token>.json` per profile, `index.jsonl` with a
 * summary line per save and a `{"del": token}` line per purge (the last one torn by a crash),
 * the temporary file of an interrupted write, an unreadable profile file.
 */
function legacyFolder (dir: string, profiles: Profile[], purged: Profile): void {
  for (const profile of profiles) writeFileSync(join(dir, `${profile.token}.json`), JSON.stringify(profile))
  const lines = [...profiles, purged].map((profile) => JSON.stringify(summarize(profile))).concat(JSON.stringify({ del: purged.token }))
  writeFileSync(join(dir, 'index.jsonl'), lines.join('\n') + '\n{"token":"abc')
  writeFileSync(join(dir, `.${profiles[0].token}.1234.7.tmp`), '{"half')
  writeFileSync(join(dir, 'fedcba.json'), '{"not":"a profile"}')
}

t.test('a folder of the previous layout is read: its profiles are served until they leave the bounds, and that layout is never written', async (t) => {
  const dir = tempDir(t)
  const real = await realProfile(t)
  const older = fakeProfile({ time: real.time - 1000 })
  const purged = fakeProfile()
  legacyFolder(dir, [older, real], purged)
  const index = readFileSync(join(dir, 'index.jsonl'), 'utf8')

  const log = collectingLog()
  const store = await FileProfileStorage.open(dir, { maxProfiles: 4, maxAgeMs: 60_000 }, log)
  t.match(log.messages, ['fastify-kernel: the profiler folder holds profiles of the previous layout (a file per profile); they are read until they leave the bounds, and new profiles are appended to its segments'])
  t.equal(store.size, 2, 'its two profiles (not the purged one, nor the unreadable file)')
  t.same(await store.load(real.token), real)
  t.same(await store.load(older.token), older)
  t.equal(await store.load(purged.token), undefined)
  t.same(readdirSync(dir).filter((name) => !name.startsWith('.')).sort(), [`${older.token}.json`, `${real.token}.json`, 'index.jsonl', 'segments', 'writers'].sort(), 'the purged, unreadable and temporary files are removed')

  const newer = [fakeProfile({ time: real.time + 1 }), fakeProfile({ time: real.time + 2 })]
  await saveAll(store, newer)
  t.equal(readFileSync(join(dir, 'index.jsonl'), 'utf8'), index, 'the old index is never written')
  t.same((await store.find()).map((s) => s.token), [...newer.map((p) => p.token).reverse(), real.token, older.token], 'old and new, newest first')
  await store.save(fakeProfile())
  t.notOk(existsSync(join(dir, `${older.token}.json`)), 'beyond the bound, the oldest file goes')
  t.ok(existsSync(join(dir, 'index.jsonl')), 'the old index stays while one of its profiles is kept')
  await store.save(fakeProfile())
  await store.close()
  t.same(readdirSync(dir).filter((name) => !name.startsWith('.')).sort(), ['segments', 'writers'], 'once its last profile left, the previous layout is gone')
})

t.test('the app and the console\'s reader serve a folder of the previous layout: its pages, never a 500', async (t) => {
  const dir = tempDir(t)
  const real = await realProfile(t)
  const future = fakeProfile({ time: 8.64e15 })
  legacyFolder(dir, [real], fakeProfile())
  // a line dated far in the future, with its file: not a plausible summary, read back from its file and refused
  writeFileSync(join(dir, `${future.token}.json`), JSON.stringify(future))
  appendFileSync(join(dir, 'index.jsonl'), '\n' + JSON.stringify(summarize(future)) + '\n')

  const reader = new FileProfileReader(dir, { maxProfiles: 100, maxAgeMs: 3_600_000 }, collectingLog(), systemClock)
  t.same((await reader.find()).map((s) => s.token), [real.token], 'the console lists it')
  t.same(await reader.load(real.token), real, 'and reads it')

  const app = await buildApp({ debug: true, profiler: { storage: 'file', directory: dir } })
  t.teardown(() => app.close())
  for (const panel of ['', '?panel=request', '?panel=routing', '?panel=logs', '?panel=time', '?panel=config']) {
    const page = await app.inject({ url: `/_profiler/${real.token}${panel}`, headers: { host } })
    t.equal(page.statusCode, 200, `${real.token}${panel}`)
    t.match(page.body, '/hello/legacy')
  }
  t.match((await app.inject({ url: '/_profiler/', headers: { host } })).body, real.token, 'the search page lists it')
  for (const url of [`/_profiler/${future.token}`, '/_profiler/latest', '/_profiler/fedcba']) t.equal((await app.inject({ url, headers: { host } })).statusCode, 200, url)
})

t.test('wrong-shape profiles in a segment, written by another version or by hand, never give a 500', async (t) => {
  const dir = tempDir(t)
  const real = await realProfile(t)
  const collected = real.collected as Record<string, Record<string, unknown>>
  const wrongs: Array<Record<string, unknown>> = [
    { collected: { ...collected, request: 'not an object' } },
    { collected: { ...collected, logs: {} } },
    { collected: { ...collected, time: null } },
    { collected: { ...collected, events: { entries: 'x' } } },
    { collected: [] },
    { collected: { ...collected, request: { ...collected.request, response: { headers: 7 } } } },
    { version: 1 }
  ]
  const tokens = wrongs.map((_, i) => (0xabc000 + i).toString(16))
  mkdirSync(join(dir, 'segments'))
  writeFileSync(join(dir, 'segments', '1.jsonl'), wrongs.map((wrong, i) => {
    const profile = { ...real, token: tokens[i], ...wrong }
    return JSON.stringify({ s: summarize(profile as Profile), p: profile }) + '\n'
  }).join(''))
  const app = await buildApp({ debug: true, profiler: { storage: 'file', directory: dir } })
  t.teardown(() => app.close())
  for (const token of tokens) {
    for (const panel of ['', ...['request', 'logs', 'time', 'events', 'routing', 'exception'].map((p) => `?panel=${p}`)]) {
      const page = await app.inject({ url: `/_profiler/${token}${panel}`, headers: { host } })
      t.equal(page.statusCode, 200, `${token}${panel}`)
    }
  }
  t.match((await app.inject({ url: `/_profiler/${tokens[6]}`, headers: { host } })).body, `Token "${tokens[6]}" not found.`, 'a profile of another version is not found')
  t.equal((await app.inject({ url: '/_profiler/latest', headers: { host } })).statusCode, 200)
})

t.test('the console\'s reader, while the server writes: the same profiles as the writer keeps, a line being written skipped until it is whole', async (t) => {
  const dir = tempDir(t)
  const store = await FileProfileStorage.open(dir, { maxProfiles: 4, maxAgeMs: 60_000 }, collectingLog())
  t.teardown(() => store.close())
  const reader = new FileProfileReader(dir, { maxProfiles: 4, maxAgeMs: 60_000 }, collectingLog(), systemClock)
  t.same(await reader.find(), [], 'nothing yet')
  const saved: Profile[] = []
  for (let i = 0; i < 10; i++) {
    saved.push(fakeProfile())
    await store.save(saved[i])
    t.same((await reader.find()).map((s) => s.token), (await store.find()).map((s) => s.token), `after save ${i + 1}: the writer's profiles`)
  }
  t.equal(reader.size, 4)
  t.same(await reader.load(saved[9].token), saved[9])
  t.equal(await reader.load(saved[0].token), undefined, 'beyond the bound, as for the writer')

  // a segment whose last line is being written (another writer's, by hand here)
  const late = fakeProfile()
  const line = JSON.stringify({ s: summarize(late), p: late }) + '\n'
  writeFileSync(join(dir, 'segments', '99.jsonl'), line.slice(0, 40))
  t.notOk((await reader.find()).some((s) => s.token === late.token), 'half a line: not listed')
  appendFileSync(join(dir, 'segments', '99.jsonl'), line.slice(40))
  t.same(await reader.load(late.token), late, 'once whole, read')
  rmSync(join(dir, 'segments', '99.jsonl'))
  t.equal(await reader.load(late.token), undefined, 'its segment deleted: not found')
})

t.test('storages of one process on one folder (three apps): one writer slot, tokens never twice, segments apart, every profile seen by each, the bounds for the folder as a whole', async (t) => {
  const dir = tempDir(t)
  const clock = new ManualClock()
  const bound = { maxProfiles: 12, maxAgeMs: 60_000 }
  const writers = await Promise.all([1, 2, 3].map(async () => await FileProfileStorage.open(dir, bound, collectingLog(), { clock })))
  t.equal(heldSlots(dir).length, 1, 'one slot held by the process')
  const saved: Profile[] = []
  for (let round = 0; round < 8; round++) {
    for (const writer of writers) {
      const token = writer.reserveToken()!
      const profile = fakeProfile({ token, time: clock.now() + saved.length })
      saved.push(profile)
      await writer.save(profile)
    }
  }
  t.equal(new Set(saved.map((profile) => profile.token)).size, saved.length, 'no token handed out twice')
  t.same([...new Set(saved.map((profile) => profile.token.slice(0, 2)))], heldSlots(dir), 'every one begins with the slot')
  const byStorage = new Map(saved.map((profile, n) => [profile.token, n % 3]))
  const mixed = segments(dir).filter((file) => new Set(records(dir, file).map((line) => byStorage.get(line.s.token))).size > 1)
  t.same(mixed, [], 'each storage appends to segments of its own')
  const newest = saved.slice(-12).map((profile) => profile.token).reverse()
  for (const [i, writer] of writers.entries()) {
    t.same((await writer.find({ limit: 100 })).map((summary) => summary.token), newest, `storage ${i + 1} lists the 12 newest of all three, newest first`)
    t.equal(writer.size, 12, `storage ${i + 1} keeps the bound for the folder`)
    t.same(await writer.load(saved.at(-1)!.token), saved.at(-1), `storage ${i + 1} loads the last one (storage 3's)`)
    t.equal(await writer.load(saved[0].token), undefined, `storage ${i + 1}: the oldest is beyond the bound`)
  }
  const reader = new FileProfileReader(dir, bound, collectingLog(), clock)
  t.same((await reader.find({ limit: 100 })).map((summary) => summary.token), newest, 'the console\'s reader lists the same')
  // a storage's beat deletes no segment another storage of the process appends to
  await Promise.all(writers.map(async (writer) => { await (writer as unknown as { maintain: () => Promise<void> }).maintain() }))
  const later = await Promise.all(writers.map(async (writer, i) => {
    const profile = fakeProfile({ token: writer.reserveToken()!, time: clock.now() + 100 + i })
    await writer.save(profile)
    return profile
  }))
  for (const [i, writer] of writers.entries()) {
    const loaded = await Promise.all([...newest.slice(0, 9), ...later.map((profile) => profile.token)].map(async (token) => (await writer.load(token))?.token))
    t.same(loaded, [...newest.slice(0, 9), ...later.map((profile) => profile.token)], `storage ${i + 1} reads every kept profile after the beats and the next saves: no segment being written was deleted`)
  }
  await writers[0].close()
  await writers[1].close()
  t.equal(heldSlots(dir).length, 1, 'the slot is held while one storage of the process is open')
  await writers[2].close()
  t.same(heldSlots(dir), [], 'and given back by the last')
})

t.test('a folder deleted under the storage is created again, and locked again, at the next write', async (t) => {
  const dir = tempDir(t)
  const log = collectingLog()
  const store = await FileProfileStorage.open(dir, limits, log)
  t.teardown(() => store.close())
  const lost = fakeProfile()
  await store.save(lost)
  rmSync(dir, { recursive: true, force: true })
  const next = fakeProfile()
  await store.save(next)
  t.same(segments(dir), [slotOf(dir).segment(1)], 'a new segment in the new folder')
  t.same(await store.load(next.token), next)
  t.same((await store.find()).map((s) => s.token), [next.token], 'what was deleted is no longer listed')
  t.equal(await store.load(lost.token), undefined, 'nor found')
  t.equal(store.size, 1)
  t.equal(heldSlots(dir).length, 1, 'and a writer slot held in it again')
  t.match(log.messages, ['fastify-kernel: the profiler folder was deleted; it is created again'])
})

t.test('purge: every segment and every file of the previous layout goes; the storage works on', async (t) => {
  const dir = tempDir(t)
  legacyFolder(dir, [fakeProfile()], fakeProfile())
  const store = await FileProfileStorage.open(dir, limits, collectingLog())
  t.teardown(() => store.close())
  await saveAll(store, [fakeProfile(), fakeProfile()])
  t.equal(store.size, 3)
  const { segment } = slotOf(dir)
  await store.purge()
  t.same(readdirSync(dir).filter((name) => !name.startsWith('.')).sort(), ['segments', 'writers'])
  t.same(segments(dir), [])
  const after = fakeProfile()
  await store.save(after)
  t.same(await store.load(after.token), after)
  t.same(segments(dir), [segment(2)])
})
