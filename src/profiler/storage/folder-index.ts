import TinyQueue from 'tinyqueue'
import type { ProfileSummary } from '../profile.js'
import type { FileHandle } from 'node:fs/promises'
import type { ScanChanges } from './segment-scan.js'

/** A segment file of the folder, as an index knows it (a writer's own ones carry its writing state). */
export interface SegmentState {
  /** its file name; '' for the previous layout's files (a file per profile) */
  name: string
  /** the writer slot that wrote it (undefined: the single-writer layout, or the previous layout) */
  slot: string | undefined
  n: number
  /** kept profiles whose record is in it: at 0 it may be deleted (writer-side rules) */
  live: number
  /** this process writes it, or wrote it */
  own: boolean
  /** own segments: records written, bytes written, when it was started (the storage's clock) */
  records: number
  size: number
  startedAt: number
  /** the own segment being written; closed ones have none */
  handle?: FileHandle
  /** a write to it failed: the next write starts another */
  broken?: boolean
}

/** The previous layout's profiles (a `<token>.json` each): one pseudo-segment. */
export function legacySegment (): SegmentState {
  return { name: '', slot: undefined, n: 0, live: 0, own: false, records: 0, size: 0, startedAt: 0 }
}

/** A kept profile: its summary, and where its JSON is. */
export interface IndexEntry {
  summary: ProfileSummary
  /** its segment; undefined while the writer has not written it yet */
  segment: SegmentState | undefined
  /** bytes of its JSON in its segment (or, unwritten, in the writer's buffer) */
  offset: number
  length: number
}

export interface IndexLimits {
  maxProfiles: number
  maxAgeMs: number
}

/**
 * The order the bounds follow: by time, and between profiles of the same millisecond by token,
 * which every process sees alike (an order of arrival differs between processes: two of them
 * would keep different profiles of the same millisecond at the bound, one listing a profile the
 * other has dropped and may have deleted the segment of). Redis's sorted set orders ties the same way.
 */
const older = (a: IndexEntry, b: IndexEntry): number => a.summary.time - b.summary.time || (a.summary.token < b.summary.token ? -1 : a.summary.token > b.summary.token ? 1 : 0)

/**
 * What a profiler folder keeps, as one process sees it: every writer's profiles (its own as it
 * saves them, the others' as its scans of their segments find them), bounded for the folder as
 * a whole. The bounds are by `time` (the contract's): beyond `maxProfiles` the oldest leave,
 * and any older than `maxAge`: the oldest by time leaves first either way. Profiles mostly come
 * in order of time (a process's own saves): those go to a queue, in O(1); the others (the other
 * writers' read in batches, a long job saved late) to a min-heap; the oldest is the older of the
 * two heads. Every process applies the same rule to what it sees, and sees a subset
 * of what is on disk: a profile one process finds beyond the bounds is beyond them for all, so
 * a segment deleted for it holds nothing another process should show.
 */
export class FolderIndex<E extends IndexEntry = IndexEntry> {
  /** token → its kept profile */
  readonly entries = new Map<string, E>()
  /** name → every segment known (own, others', the previous layout's) */
  readonly segments = new Map<string, SegmentState>()
  /**
   * kept entries that came in order of time, oldest first (from `head` on), and the others, in a
   * min-heap by time; an entry that left (replaced, forgotten) stays until it is at the front
   */
  private ordered: E[] = []
  private head = 0
  private heap = new TinyQueue<E>([], older)

  /** @param left a kept profile left (the bounds, a later save of its token): the writer may delete its file or its emptied segment */
  constructor (readonly limits: IndexLimits, private readonly left: (entry: E) => void = () => undefined) {}

  get size (): number {
    return this.entries.size
  }

  expired (summary: ProfileSummary, now: number): boolean {
    return now - summary.time > this.limits.maxAgeMs
  }

  /** Keeps a profile (replacing its token's earlier one), then holds the bounds. */
  add (entry: E, now: number): void {
    const token = entry.summary.token
    const previous = this.entries.get(token)
    if (previous !== undefined) this.leave(token, previous)
    this.entries.set(token, entry)
    if (entry.segment !== undefined) entry.segment.live++
    const last = this.ordered.length > this.head ? this.ordered[this.ordered.length - 1]! : undefined
    if (last === undefined || older(last, entry) <= 0) this.ordered.push(entry)
    else this.heap.push(entry)
    this.prune(now)
  }

  /** The kept entry that is the oldest (dropping from the fronts those that left already). */
  private oldest (): E | undefined {
    const { ordered, heap, entries } = this
    while (this.head < ordered.length && entries.get(ordered[this.head]!.summary.token) !== ordered[this.head]) this.head++
    while (heap.length > 0 && entries.get(heap.peek()!.summary.token) !== heap.peek()) heap.pop()
    const queued = this.head < ordered.length ? ordered[this.head] : undefined
    const heaped = heap.peek()
    if (queued === undefined) return heaped
    if (heaped === undefined) return queued
    return older(queued, heaped) <= 0 ? queued : heaped
  }

  /** An entry's segment is now known (the writer wrote it). */
  placed (entry: E, segment: SegmentState): void {
    entry.segment = segment
    if (this.entries.get(entry.summary.token) === entry) segment.live++
  }

  /** The oldest profiles beyond the count, and every expired one, leave. */
  prune (now: number): void {
    for (let oldest = this.oldest(); oldest !== undefined; oldest = this.oldest()) {
      if (this.entries.size <= this.limits.maxProfiles && !this.expired(oldest.summary, now)) break
      if (this.head < this.ordered.length && this.ordered[this.head] === oldest) this.head++
      else this.heap.pop()
      this.leave(oldest.summary.token, oldest)
    }
    // the queue's front, once it is most of it, and entries that left while not at the front: let go
    if (this.head > 1024 && this.head * 2 > this.ordered.length) {
      this.ordered = this.ordered.slice(this.head)
      this.head = 0
    }
    if (this.ordered.length - this.head + this.heap.length > 2 * this.entries.size + 1024) this.rebuild()
  }

  /** The queue and the heap from the kept entries only. */
  private rebuild (): void {
    const kept = [...this.entries.values()].sort(older)
    this.ordered = kept
    this.head = 0
    this.heap = new TinyQueue<E>([], older)
  }

  /** A kept profile leaves (the bounds, a deleted segment, a replaced token). */
  leave (token: string, entry: E): void {
    if (this.entries.get(token) !== entry) return
    this.entries.delete(token)
    if (entry.segment !== undefined) entry.segment.live--
    this.left(entry)
  }

  /** A kept profile, unless it expired. */
  kept (token: string, now: number): E | undefined {
    const entry = this.entries.get(token)
    return entry === undefined || this.expired(entry.summary, now) ? undefined : entry
  }

  summaries (now: number): ProfileSummary[] {
    const live: ProfileSummary[] = []
    for (const entry of this.entries.values()) if (!this.expired(entry.summary, now)) live.push(entry.summary)
    return live
  }

  /** Every profile of a segment leaves (it was deleted, or replaced on disk), and the segment is forgotten. */
  drop (segment: SegmentState): void {
    this.segments.delete(segment.name)
    for (const [token, entry] of this.entries) {
      if (entry.segment === segment) {
        this.entries.delete(token)
        segment.live--
      }
    }
  }

  /** What a scan of the others' segments found: their new records kept (within the bounds), deleted segments forgotten. */
  merge (changes: ScanChanges, now: number, entry: (summary: ProfileSummary, segment: SegmentState, offset: number, length: number) => E): void {
    for (const name of changes.gone) {
      const segment = this.segments.get(name)
      if (segment !== undefined && !segment.own) this.drop(segment)
    }
    for (const change of changes.changed) {
      let segment = this.segments.get(change.segment.name)
      if (segment !== undefined && change.reset) {
        this.drop(segment)
        segment = undefined
      }
      if (segment === undefined) {
        segment = { name: change.segment.name, slot: change.segment.slot, n: change.segment.n, live: 0, own: false, records: 0, size: 0, startedAt: now }
        this.segments.set(segment.name, segment)
      }
      segment.records += change.records.length
      for (const record of change.records) {
        if (this.expired(record.summary, now)) continue
        this.add(entry(record.summary, segment, record.offset, record.length), now)
      }
    }
  }

  /** Everything leaves: a purge. */
  clear (): void {
    this.entries.clear()
    this.segments.clear()
    this.ordered = []
    this.head = 0
    this.heap = new TinyQueue<E>([], older)
  }
}
