/**
 * Processes writing one profiler folder at once (the compiled file storage in child processes,
 * and this process): each holds a writer slot, a writer killed with SIGKILL mid-write loses at
 * most its last unsettled profiles and corrupts nobody's, its slot is held until its lock goes
 * stale, and when all 256 slots are held a new writer is refused by name.
 */
import t from 'tap'
import type { Test } from 'tap'
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { FileProfileStorage } from '../../src/profiler/storage/file.js'
import { FileProfileReader } from '../../src/profiler/storage/file-reader.js'
import { WriterSlots } from '../../src/profiler/storage/writer-slots.js'
import { systemClock } from '../../src/clock.js'
import { fakeProfileMaker } from './helpers.js'

const writerFixture = resolve(import.meta.dirname, 'fixtures/folder-writer.mjs')
const MAX_PROFILES = 300
const limits = { maxProfiles: MAX_PROFILES, maxAgeMs: 600_000 }

function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'profiler-writers-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function collectingLog (): { warn: (fields: object, message: string) => void, messages: string[] } {
  const messages: string[] = []
  return { warn: (_fields, message) => { messages.push(message) }, messages }
}

interface Writer {
  child: ChildProcess
  slot: string
  /** the last "saved <n>" it printed */
  saved: () => number
  /** resolves once it has printed a line matching `pattern` */
  says: (pattern: RegExp) => Promise<string>
}

/** A writer process, once it holds its slot. */
async function writerProcess (t: Test, dir: string): Promise<Writer> {
  const child = spawn(process.execPath, [writerFixture, dir, String(MAX_PROFILES)], { stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const says = async (pattern: RegExp): Promise<string> => {
    for (;;) {
      const match = pattern.exec(output)
      if (match !== null) return match[0]
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the writer exited (${child.exitCode ?? child.signalCode}) before saying ${pattern}: ${output}`)
      await Promise.race([once(child.stdout!, 'data'), once(child, 'exit')])
    }
  }
  const slot = (await says(/ready [0-9a-f]{2}/)).slice(-2)
  const saved = (): number => Number([...output.matchAll(/saved (\d+)/g)].at(-1)?.[1] ?? 0)
  return { child, slot, saved, says }
}

/** Every whole line of every segment, parsed: what the disk holds. */
function recordsOnDisk (dir: string): Array<{ s: { token: string } }> {
  return readdirSync(join(dir, 'segments')).flatMap((name) => readFileSync(join(dir, 'segments', name), 'utf8').split('\n').slice(0, -1).map((line) => JSON.parse(line) as { s: { token: string } }))
}

t.test('two writer processes and this one on one folder: one killed with SIGKILL mid-write; the others never fail, every profile listed is readable, the bound holds', async (t) => {
  const dir = tempDir(t)
  const [a, b] = await Promise.all([writerProcess(t, dir), writerProcess(t, dir)])
  const log = collectingLog()
  const here = await FileProfileStorage.open(dir, limits, log)
  t.teardown(() => here.close())
  t.equal(new Set([a.slot, b.slot, here.reserveToken()!.slice(0, 2)]).size, 3, 'three writers, three slots')

  const fakeProfile = fakeProfileMaker(0)
  let failed = 0
  let savedHere = 0
  const saveHere = async (count: number): Promise<void> => {
    await Promise.all(Array.from({ length: count }, async () => {
      try {
        await here.save(fakeProfile({ token: here.reserveToken()!, time: Date.now() }))
        savedHere++
      } catch {
        failed++
      }
    }))
  }
  // while both write
  await Promise.all([a.says(/saved [1-9]\d{2,}/), b.says(/saved [1-9]\d{2,}/)])
  // A is killed in the middle of its writes (it writes without pause), this process saving meanwhile
  const killedAfter = a.saved()
  const exited = once(a.child, 'exit')
  const saving = saveHere(50)
  a.child.kill('SIGKILL')
  await Promise.all([exited, saving])
  // B goes on writing
  const bBefore = b.saved()
  await b.says(new RegExp(`saved (${bBefore + 100}|[1-9]\\d{${String(bBefore + 100).length},})`))
  await saveHere(50)
  t.equal(failed, 0, `no save of this process failed (${savedHere} saved)`)

  // while B writes (thousands a second, the bound 300: a profile leaves the bounds within a
  // moment, and B deletes its segments), a profile listed is read whole or, gone, not found
  let whole = 0
  let wrong = 0
  for (const summary of await here.find({ limit: MAX_PROFILES * 2 })) {
    const loaded = await here.load(summary.token)
    if (loaded !== undefined && loaded.token === summary.token && loaded.url === summary.url) whole++
    else if (loaded !== undefined) wrong++
  }
  t.equal(wrong, 0, `no profile read while B writes is another one (${whole} read whole, the others gone: the bound moves faster than the reads on a loaded machine)`)
  // B stops: its last saves settled, its slot given back
  b.child.kill('SIGTERM')
  const bSaved = Number((await b.says(/closed \d+/)).split(' ')[1])
  const found = await here.find({ limit: MAX_PROFILES * 2 })
  t.equal(found.length, MAX_PROFILES, `the folder's bound: the ${MAX_PROFILES} newest listed, of ${killedAfter}+ (A), ${bSaved} (B) and ${savedHere} (here)`)
  const prefixes = new Set(found.map((summary) => summary.token.slice(0, 2)))
  t.ok(prefixes.has(b.slot), 'B\'s profiles are listed here')
  let unreadable = 0
  for (const summary of found) if ((await here.load(summary.token))?.token !== summary.token) unreadable++
  t.equal(unreadable, 0, 'every profile listed is read back whole')

  // A's last write was cut by the kill: its torn line (if any) is skipped by every reader, its whole ones are read
  const reader = new FileProfileReader(dir, { maxProfiles: 100_000, maxAgeMs: 600_000 }, collectingLog(), systemClock)
  const ofA = (await reader.find({ limit: 100_000 })).filter((summary) => summary.token.startsWith(a.slot))
  const lastOfA = Math.max(...ofA.map((summary) => Number(summary.url.split('/').at(-1))))
  t.ok(lastOfA >= killedAfter - 10, `A's last profiles settled before the kill are on disk (its #${lastOfA}; it had said ${killedAfter})`)
  let unreadableOfA = 0
  for (const summary of ofA) if ((await reader.load(summary.token))?.token !== summary.token) unreadableOfA++
  t.equal(unreadableOfA, 0, 'and each one reads back whole')
  t.same(log.messages, [], 'nothing logged here')

  // A's slot stays held until its lock goes stale (its mtime, which A refreshed, stops moving)
  t.ok(await WriterSlots.isHeld(dir, a.slot), 'A\'s slot is held for a while after its death')
  const old = new Date(Date.now() - 60_000)
  utimesSync(join(dir, 'writers', `${a.slot}.lock`), old, old)
  t.notOk(await WriterSlots.isHeld(dir, a.slot), 'then stale, free again')

  // this process's beat deletes every segment none of whose profiles the folder keeps, A's and B's included
  await (here as unknown as { maintain: () => Promise<void> }).maintain()
  const onDisk = recordsOnDisk(dir)
  t.ok(onDisk.length <= MAX_PROFILES + Math.ceil(MAX_PROFILES / 8) * 3, `the disk holds ${onDisk.length} records: the bound, and less than a segment more per writer`)
  const kept = new Set(found.map((summary) => summary.token))
  t.ok([...kept].every((token) => onDisk.some((record) => record.s.token === token)), 'every kept profile is still on disk')
})

t.test('a new writer when all 256 slots are held is refused by name; a stale slot is taken', async (t) => {
  const dir = tempDir(t)
  mkdirSync(join(dir, 'writers'), { recursive: true })
  for (let slot = 0; slot < 256; slot++) mkdirSync(join(dir, 'writers', `${slot.toString(16).padStart(2, '0')}.lock`))
  await t.rejects(FileProfileStorage.open(dir, limits, collectingLog()), { code: 'KERNEL_PROFILER_FOLDER_IN_USE', message: /all 256 writer slots of the folder are held/ })
  const old = new Date(Date.now() - 60_000)
  utimesSync(join(dir, 'writers', '7f.lock'), old, old)
  const store = await FileProfileStorage.open(dir, limits, collectingLog())
  t.teardown(() => store.close())
  t.match(store.reserveToken(), /^7f[0-9a-f]{4}$/, 'the stale one, whose tokens it hands out')
})
