/**
 * The file storage's index: the bounds by time for the folder as a whole, whatever the order in
 * which profiles arrive (a process's own in order, the other writers' in batches, a long job
 * saved late).
 */
import t from 'tap'
import { FolderIndex } from '../../src/profiler/storage/folder-index.js'
import type { IndexEntry } from '../../src/profiler/storage/folder-index.js'

const NOW = 1_800_000_000_000

function entry (n: number, time: number): IndexEntry {
  const token = n.toString(16).padStart(6, '0')
  return { summary: { token, method: 'GET', url: `/p/${n}`, statusCode: 200, ip: '', time, duration: 1 }, segment: undefined, offset: 0, length: 0 }
}

/** A shuffle the test can repeat. */
function shuffled<T> (items: T[], seed: number): T[] {
  const out = [...items]
  let state = seed
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2147483648
    const j = state % (i + 1)
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

t.test('the newest maxProfiles by time are kept, whatever the order of arrival', async (t) => {
  const all = Array.from({ length: 300 }, (_, n) => entry(n, NOW - 300_000 + n * 1000))
  const newest = all.slice(-20).map((e) => e.summary.token).sort()
  for (const [name, order] of [['in order', all], ['reversed', [...all].reverse()], ['shuffled', shuffled(all, 7)], ['batches of others between own', all.filter((_, n) => n % 3 !== 0).concat(all.filter((_, n) => n % 3 === 0))]] as const) {
    const left: string[] = []
    const index = new FolderIndex({ maxProfiles: 20, maxAgeMs: 3_600_000 }, (gone) => { left.push(gone.summary.token) })
    for (const e of order) {
      index.add({ ...e, summary: { ...e.summary } }, NOW)
      if (index.size > 20) t.fail(`${name}: over the bound`)
    }
    t.same([...index.entries.keys()].sort(), newest, `${name}: the 20 newest`)
    t.equal(left.length, 280, `${name}: every other one left, once`)
  }
})

t.test('by age: older than maxAge leaves at the next prune, newest kept; a token saved again is one profile', async (t) => {
  const index = new FolderIndex({ maxProfiles: 100, maxAgeMs: 60_000 })
  for (let n = 0; n < 10; n++) index.add(entry(n, NOW - n * 10_000), NOW)
  t.equal(index.size, 7, 'those older than 60 s never stay')
  index.prune(NOW + 25_000)
  t.same([...index.entries.keys()].sort(), [0, 1, 2, 3].map((n) => n.toString(16).padStart(6, '0')), 'a clock 25 s later: four left')
  index.add(entry(1, NOW + 1000), NOW + 25_000)
  t.equal(index.size, 4, 'the same token again: still one')
  index.prune(NOW + 61_000)
  t.same([...index.entries.keys()], ['000001'], 'its later time counts')
})

t.test('profiles of the same millisecond at the bound: every process keeps the same ones, whatever the order it saw them in', async (t) => {
  // 4 writers saving hundreds a second: many profiles share a millisecond; two processes see them in different orders
  const all = Array.from({ length: 120 }, (_, n) => entry(n * 7919 % 4096, NOW - 60_000 + Math.floor(n / 6) * 1000))
  const kept = (order: IndexEntry[]): string[] => {
    const index = new FolderIndex({ maxProfiles: 40, maxAgeMs: 3_600_000 })
    for (const e of order) index.add({ ...e, summary: { ...e.summary } }, NOW)
    return [...index.entries.keys()].sort()
  }
  const first = kept(all)
  t.equal(first.length, 40)
  for (const seed of [1, 2, 3, 4, 5]) t.same(kept(shuffled(all, seed)), first, `order ${seed}: the same 40`)
  t.same(kept([...all].reverse()), first, 'reversed: the same 40')
  // the bound falls inside a millisecond's six (40 = 6 × 6 + 4): which four of them stay is the tokens' order, not the arrival's
  const boundary = all.filter((e) => e.summary.time === NOW - 60_000 + 13 * 1000).map((e) => e.summary.token).sort()
  t.same(first.filter((token) => boundary.includes(token)), boundary.slice(2), 'the millisecond at the bound: its two lowest tokens left')
})
