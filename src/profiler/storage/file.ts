import { existsSync, fstatSync } from 'node:fs'
import { mkdir, open, readdir, truncate } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { Profile, ProfileSummary } from '../profile.js'
import { summarize } from '../profile.js'
import { parseProfile } from '../profile-shape.js'
import { TOKEN_PATTERN } from '../token.js'
import type { ProfileFilter, ProfileStorage } from './storage.js'
import { selectSummaries } from './storage.js'
import { FolderWriter, WriterSlots } from './writer-slots.js'
import type { SlotLoss, WriterSlotTimings } from './writer-slots.js'
import { LEGACY_INDEX, legacyFile, readLegacyFolder, readLegacyProfile, removeFile } from './legacy-folder.js'
import type { StorageLogger } from './legacy-folder.js'
import { parseSegmentName, recordBound, segmentName, writeRecord } from './segment-format.js'
import { SEGMENTS, SegmentScan, readRecord, segmentPath } from './segment-scan.js'
import type { ScanChanges } from './segment-scan.js'
import { FolderIndex, legacySegment } from './folder-index.js'
import type { IndexEntry, SegmentState } from './folder-index.js'
import type { Clock } from '../../clock.js'
import { systemClock } from '../../clock.js'
import { errorCodes } from '../../errors/codes.js'

export type { StorageLogger } from './legacy-folder.js'

export interface FileStorageOptions {
  /** what dates the profiles' ages (default the system clock) */
  clock?: Clock
  slotTimings?: WriterSlotTimings
}

/**
 * A segment is closed once it holds this share of `maxProfiles`, or SEGMENT_BYTES, or is older
 * than this share of `maxAge`: it is deleted as a whole once none of its profiles is kept, so
 * the disk holds up to about a segment's worth more than the bounds say (per writer).
 */
const SEGMENTS_PER_BOUND = 8
const SEGMENT_BYTES = 16 * 1024 * 1024
/**
 * A write's buffer: profiles are written into it as they are saved (their JSON string is then
 * let go at once, young), and it goes to disk whole; two are in use at most (one being written,
 * one being filled), and one of up to BUFFER_KEPT bytes is kept for the next write.
 */
const BUFFER_BYTES = 1024 * 1024
const BUFFER_KEPT = 4 * 1024 * 1024
/**
 * How often a writer reads what the others appended (their profiles count in the bounds, so its
 * own old segments are deleted on time), deletes segments nobody keeps a profile of, and closes
 * an idle segment. Pages read the others' new profiles when they are asked, not on this beat.
 */
const MAINTENANCE_MS = 10_000

/** Profiles saved for the same write, as their lines. */
interface Batch {
  buffer: Buffer
  length: number
  saves: QueuedSave[]
}

/** A kept profile; while it waits for the writer (no segment yet), `offset` and `length` are its bytes in its batch's buffer. */
interface Entry extends IndexEntry {
  batch: Batch | undefined
}

interface QueuedSave {
  token: string
  entry: Entry
  resolve: () => void
  reject: (error: unknown) => void
}

/**
 * Profiles appended to segment files, one JSON line per profile (its summary, then the
 * profile), by any number of processes at once: each process holds a writer slot of the folder
 * (writer-slots.ts), hands out tokens that begin with it, and appends only to segments of its
 * own (`segments/<slot>-<n>.jsonl`), so that writers never share a file and a writer killed
 * mid-write (SIGKILL) leaves at most a torn last line in its own segment, which every reader
 * skips. Each process keeps an index in memory (token → segment, offset, length and summary) of
 * every writer's profiles: its own as it saves them; the others' read from their segments'
 * new lines when a page asks (a token it does not know, a search) and every MAINTENANCE_MS.
 * The bounds (`maxProfiles` by count, `maxAge` by time) hold for the folder as a whole: the
 * newest by time are kept whichever process wrote them, and a segment none of whose profiles is
 * kept is deleted (by its writer; a closed one of another writer, by any process).
 *
 * The profiles saved in one turn of the event loop go to disk in one write (and those saved
 * while a write is under way, in the next one): a save costs its serialising and its share of a
 * write, not a file. A folder an earlier version wrote (a `<token>.json` per profile and
 * `index.jsonl`, or segments `<n>.jsonl` of one writer) is read as it is: its profiles are
 * served until they leave the bounds, and that layout is never written again. The console
 * reads a folder without writing it (`FileProfileReader`).
 */
export class FileProfileStorage implements ProfileStorage {
  readonly kind = 'file'
  private readonly index: FolderIndex<Entry>
  private readonly scan: SegmentScan
  /** the own segment being appended to */
  private current: SegmentState | undefined
  /** the previous layout's profiles, as one pseudo-segment */
  private readonly legacy = legacySegment()
  private legacyIndex = false
  private readonly directory: string
  private readonly perSegment: number
  private readonly segmentMaxAgeMs: number
  /** saves of this turn (and of the turns a write was under way), for the next write */
  private filling: Batch | undefined
  /** the buffer of the last write, for the next batch */
  private spare: Buffer | undefined
  private flushScheduled = false
  /** the write under way */
  private writing: Promise<void> | undefined
  private readonly timer: NodeJS.Timeout
  /** this process's writer of the folder (shared by its storages on it): its slots, tokens, segment numbers */
  private writer!: FolderWriter
  /** deletions not awaited by what caused them; close() awaits them */
  private readonly unlinking = new Set<Promise<void>>()
  /** the scan of the others' segments under way, and the one asked for meanwhile */
  private scanning: Promise<void> | undefined
  private scanAgain: Promise<void> | undefined
  private maintaining = false
  private closed = false

  private constructor (directory: string, limits: { maxProfiles: number, maxAgeMs: number }, private readonly log: StorageLogger, private readonly clock: Clock) {
    this.directory = resolve(directory)
    this.index = new FolderIndex<Entry>(limits, this.left)
    this.scan = new SegmentScan(this.directory)
    this.perSegment = Math.max(1, Math.ceil(limits.maxProfiles / SEGMENTS_PER_BOUND))
    this.segmentMaxAgeMs = limits.maxAgeMs / SEGMENTS_PER_BOUND
    // an idle server still forgets expired profiles and deletes their segments, and counts the others' in its bounds
    this.timer = setInterval(() => { this.maintain().catch(() => undefined) }, Math.max(1000, Math.min(this.segmentMaxAgeMs, MAINTENANCE_MS)))
    this.timer.unref()
  }

  /**
   * Opens (creating) the folder, takes a writer slot (KERNEL_PROFILER_FOLDER_IN_USE when all 256
   * are held), and builds the index from every writer's segments (and from a previous layout's
   * files, if any); what no longer counts is deleted.
   */
  static async open (directory: string, limits: { maxProfiles: number, maxAgeMs: number }, log: StorageLogger, options: FileStorageOptions = {}): Promise<FileProfileStorage> {
    const storage = new FileProfileStorage(directory, limits, log, options.clock ?? systemClock)
    try {
      await mkdir(join(storage.directory, SEGMENTS), { recursive: true })
      storage.writer = await FolderWriter.join(storage.directory, options.slotTimings ?? {}, storage.slotLost)
    } catch (error) {
      clearInterval(storage.timer)
      throw error
    }
    try {
      await storage.recover()
    } catch (error) {
      clearInterval(storage.timer)
      await storage.writer.leave(storage.slotLost)
      throw error
    }
    return storage
  }

  /** A slot of this process was lost: a segment named after it is written no more (the next write starts one under the slot taken then). */
  private readonly slotLost: SlotLoss = (slot, error) => {
    this.log.warn({ err: error, directory: this.directory, slot }, 'fastify-kernel: the profiler lost its writer slot of the folder; it takes one again before the next write')
    if (this.current !== undefined && this.current.slot === slot) this.current.broken = true
  }

  private get slots (): WriterSlots {
    return this.writer.slots
  }

  get size (): number {
    return this.index.size
  }

  private async recover (): Promise<void> {
    const now = this.clock.now()
    const legacy = await readLegacyFolder(this.directory, now, this.log)
    for (const summary of legacy.listed) {
      if (!this.index.expired(summary, now)) this.index.add(this.entry(summary, this.legacy, 0, 0), now)
    }
    const changes = await this.scan.read(now)
    this.index.merge(changes, now, this.foreignEntry)
    await this.reportDamage(changes)
    // what no longer counts: segments without a kept profile, the previous layout's files of
    // profiles not kept (expired, beyond the bound, unreadable), its interrupted writes
    await this.deleteEmptied()
    const dropped = [...legacy.listed.map((summary) => summary.token), ...legacy.unreadable].filter((token) => this.index.entries.get(token)?.segment !== this.legacy)
    await Promise.all([
      ...dropped.map((token) => removeFile(legacyFile(this.directory, token), this.log)),
      ...legacy.temporary.map((name) => removeFile(join(this.directory, name), this.log))
    ])
    this.legacyIndex = legacy.index
    if (this.legacy.live > 0) {
      this.log.warn({ directory: this.directory, profiles: this.legacy.live }, 'fastify-kernel: the profiler folder holds profiles of the previous layout (a file per profile); they are read until they leave the bounds, and new profiles are appended to its segments')
    } else {
      await this.removeLegacyIndex()
    }
  }

  /**
   * Lines that are no record, and torn last lines of segments no live writer holds (a writer
   * killed while writing): skipped, and said once when the folder is opened; a torn line is cut
   * off then (nobody appends to that segment any more), so that the next process to open the
   * folder does not say it again. A torn line of a live writer is a record being written.
   */
  private async reportDamage (changes: ScanChanges): Promise<void> {
    let skipped = changes.changed.reduce((sum, change) => sum + change.skipped, 0)
    for (const { segment, end } of changes.torn) {
      if (segment.slot !== undefined && await WriterSlots.isHeld(this.directory, segment.slot)) continue
      skipped++
      await truncate(segmentPath(this.directory, segment.name), end).catch(() => undefined)
    }
    if (skipped > 0) this.log.warn({ directory: this.directory, skipped }, 'fastify-kernel: profiler segments hold torn or corrupt lines (a crash while writing); they are skipped')
  }

  private entry (summary: ProfileSummary, segment: SegmentState | undefined, offset: number, length: number, batch?: Batch): Entry {
    return { summary, segment, offset, length, batch }
  }

  private readonly foreignEntry = (summary: ProfileSummary, segment: SegmentState, offset: number, length: number): Entry => this.entry(summary, segment, offset, length)

  /** A kept profile left: the previous layout's file goes at once, an own segment once none of its profiles is kept. */
  private readonly left = (entry: Entry): void => {
    const segment = entry.segment
    if (segment === undefined) return
    if (segment === this.legacy) {
      this.unlinkLater(legacyFile(this.directory, entry.summary.token))
      if (segment.live === 0) this.removeLegacyIndex().catch(() => undefined)
      return
    }
    if (segment.live === 0 && this.closedForSure(segment)) this.deleteSegment(segment)
  }

  /**
   * Whether nobody appends to a segment any more, as far as this process knows without asking
   * the folder: its own closed ones, those of the single-writer layout, of a slot it holds now
   * (an earlier holder's), and any of a slot that has a later one (its writer moved on). The
   * last segment of another live writer's slot may be the one it appends to.
   */
  private closedForSure (segment: SegmentState): boolean {
    if (segment === this.current || this.index.segments.get(segment.name) !== segment) return false
    if (segment.own || segment.slot === undefined) return true
    // a slot of this process: closed unless another storage of this process appends to it
    if (this.slots.list.includes(segment.slot)) return !this.writer.open.has(segment.name)
    for (const other of this.index.segments.values()) if (other.slot === segment.slot && other.n > segment.n) return true
    return false
  }

  reserveToken (): string | undefined {
    return this.writer.tokens.reserve(this.stored)
  }

  private readonly stored = (token: string): boolean => this.index.entries.has(token)

  /** A sequence holds no reservation to end. */
  releaseToken (_token: string): void {}

  /**
   * Makes the profile visible at once (`find`, `load`) and adds its line to the next write; the
   * promise settles when it is on disk. Serialising happens here, on the caller's tick.
   */
  async save (profile: Profile): Promise<void> {
    const token = profile.token
    if (!TOKEN_PATTERN.test(token)) throw new errorCodes.KERNEL_INVALID_TOKEN(token)
    const summary = summarize(profile)
    const json = JSON.stringify(profile)
    const summaryJson = JSON.stringify(summary)
    const batch = this.filling ??= { buffer: this.spare ?? Buffer.allocUnsafe(BUFFER_BYTES), length: 0, saves: [] }
    this.spare = undefined
    const needed = batch.length + recordBound(summaryJson, json)
    if (needed > batch.buffer.length) {
      const larger = Buffer.allocUnsafe(Math.max(needed, 2 * batch.buffer.length))
      batch.buffer.copy(larger, 0, 0, batch.length)
      batch.buffer = larger
    }
    const { start, end, next } = writeRecord(batch.buffer, batch.length, summaryJson, json)
    batch.length = next
    const entry = this.entry(summary, undefined, start, end - start, batch)
    this.index.add(entry, this.clock.now())
    await new Promise<void>((resolve, reject) => {
      batch.saves.push({ token, entry, resolve, reject })
      if (!this.flushScheduled) {
        this.flushScheduled = true
        setImmediate(this.flush)
      }
    })
  }

  /** Starts the next write with what is pending, unless one is under way (its end starts the next). */
  private readonly flush = (): void => {
    this.flushScheduled = false
    const batch = this.filling
    if (this.writing !== undefined || batch === undefined) return
    this.filling = undefined
    this.writing = this.write(batch).finally(() => {
      this.writing = undefined
      if (batch.buffer.length <= BUFFER_KEPT) this.spare = batch.buffer
      if (this.filling !== undefined) this.flush()
    })
  }

  /**
   * One write: the batch's lines appended to the current segment. Profiles the bound dropped
   * (or a later save of their token replaced) before the write are written too, unread: their
   * line was made when they were saved; a batch of none still kept is not written at all.
   */
  private async write (batch: Batch): Promise<void> {
    const kept = (save: QueuedSave): boolean => this.index.entries.get(save.token) === save.entry
    if (!batch.saves.some(kept)) {
      for (const save of batch.saves) save.resolve()
      return
    }
    let segment: SegmentState | undefined
    let position = 0
    try {
      segment = await this.segmentToWrite()
      position = segment.size
      await writeFully(segment.handle!, batch.buffer, batch.length, position)
    } catch (error) {
      // what the write left (whole lines of profiles whose save now fails, a torn one) is cut
      // off; if even that fails, readers skip a torn line. The next write starts another segment.
      if (segment !== undefined) {
        segment.broken = true
        await segment.handle?.truncate(position).catch(() => undefined)
      }
      for (const save of batch.saves) {
        save.entry.batch = undefined
        this.index.leave(save.token, save.entry)
        save.reject(error)
      }
      return
    }
    segment.size += batch.length
    segment.records += batch.saves.length
    for (const save of batch.saves) {
      const entry = save.entry
      entry.batch = undefined
      entry.offset += position
      // dropped or replaced meanwhile: its line stays, unread, until its segment goes
      this.index.placed(entry, segment)
      save.resolve()
    }
  }

  /**
   * The segment to append to: the current one, unless it is full, too old, broken or was
   * deleted under the storage (then another is started); before that, the folder exists (it is
   * created again if it was deleted) and this process holds a writer slot (taken again if it
   * was lost).
   */
  private async segmentToWrite (): Promise<SegmentState> {
    const segment = this.current
    if (segment !== undefined) {
      // deleted under the storage (the folder, a purge by another process, by hand): its
      // profiles are gone; an inode without a name has no link left (fstat reads memory, not the disk)
      if (fstatSync(segment.handle!.fd).nlink === 0) {
        this.current = undefined
        this.writer.open.delete(segment.name)
        await segment.handle!.close().catch(() => undefined)
        if (!existsSync(this.directory)) {
          this.log.warn({ directory: this.directory }, 'fastify-kernel: the profiler folder was deleted; it is created again')
          // what was in it (in all its segments) is not listed any more, and its slot locks went with it
          for (const [token, entry] of this.index.entries) if (entry.segment !== undefined) this.index.entries.delete(token)
          this.index.segments.clear()
          this.legacy.live = 0
          this.legacyIndex = false
          this.scan.reset()
          this.writer.open.delete(segment.name)
          await this.writer.lost()
        } else {
          this.index.drop(segment)
        }
      } else {
        const full = segment.broken === true || segment.records >= this.perSegment || segment.size >= SEGMENT_BYTES || this.clock.now() - segment.startedAt >= this.segmentMaxAgeMs
        if (full) await this.retire(segment)
        // the folder is there (the segment has its name): no need to create it
        if (this.slots.primary !== undefined) return full ? await this.startSegment() : segment
      }
    }
    // the first write, after an idle close or a purge, the folder deleted, the slot lost
    await mkdir(join(this.directory, SEGMENTS), { recursive: true })
    await this.writer.claim(false)
    return this.current ?? await this.startSegment()
  }

  private async startSegment (): Promise<SegmentState> {
    const slot = this.slots.primary
    if (slot === undefined) throw new errorCodes.KERNEL_PROFILER_FOLDER_IN_USE(0)
    // a slot's segments are numbered on from its earlier holders'
    const highest = async (): Promise<number> => {
      const names = await readdir(join(this.directory, SEGMENTS)).catch(() => [] as string[])
      return Math.max(0, ...names.map(parseSegmentName).filter((name) => name?.slot === slot).map((name) => name!.n))
    }
    for (;;) {
      const n = await this.writer.nextSegment(slot, highest)
      const name = segmentName(slot, n)
      try {
        const handle = await open(segmentPath(this.directory, name), 'wx')
        const segment: SegmentState = { name, slot, n, live: 0, own: true, records: 0, size: 0, startedAt: this.clock.now(), handle, broken: false }
        this.index.segments.set(name, segment)
        this.writer.open.add(name)
        this.current = segment
        return segment
      } catch (error) {
        // a segment of that number made by another storage of this process, or left by an earlier holder of the slot: the next number
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
    }
  }

  /** No longer written to: closed, and deleted if no profile in it is kept. */
  private async retire (segment: SegmentState): Promise<void> {
    if (this.current === segment) this.current = undefined
    this.writer.open.delete(segment.name)
    const handle = segment.handle
    segment.handle = undefined
    await handle?.close().catch(() => undefined)
    if (segment.live === 0) this.deleteSegment(segment)
  }

  /** An idle storage (no write under way): a current segment none of whose profiles is kept, or too old, is closed. */
  private closeIdleSegment (): void {
    const segment = this.current
    if (segment === undefined || this.writing !== undefined) return
    if ((segment.live === 0 && segment.records > 0) || this.clock.now() - segment.startedAt >= this.segmentMaxAgeMs) {
      this.retire(segment).catch(() => undefined)
    }
  }

  private deleteSegment (segment: SegmentState): void {
    this.index.segments.delete(segment.name)
    this.unlinkLater(segmentPath(this.directory, segment.name))
  }

  /**
   * Segments none of whose profiles is kept, that nobody writes any more: this process's closed
   * ones, those of the single-writer layout, of a slot it holds (an earlier holder's), and of
   * other writers, unless one may be the segment a live writer appends to (its slot's last).
   */
  private async deleteEmptied (): Promise<void> {
    for (const segment of [...this.index.segments.values()]) {
      if (segment.live > 0 || segment === this.current || segment === this.legacy) continue
      // the last segment of another writer's slot: deleted once that writer is gone
      if (!this.closedForSure(segment) && await WriterSlots.isHeld(this.directory, segment.slot!)) continue
      if (segment.live === 0 && segment !== this.current && this.index.segments.get(segment.name) === segment) this.deleteSegment(segment)
    }
  }

  /** What the other writers appended since the last look; concurrent callers share a scan that began after they asked. */
  private async refresh (): Promise<void> {
    if (this.scanAgain !== undefined) return await this.scanAgain
    if (this.scanning === undefined) {
      this.scanning = this.scanOthers().finally(() => { this.scanning = undefined })
      return await this.scanning
    }
    this.scanAgain = this.scanning.catch(() => undefined).then(() => {
      this.scanAgain = undefined
      return this.refresh()
    })
    return await this.scanAgain
  }

  private async scanOthers (): Promise<void> {
    const now = this.clock.now()
    const changes = await this.scan.read(now, (name) => this.index.segments.get(name)?.own === true)
    this.index.merge(changes, now, this.foreignEntry)
  }

  /**
   * The beat of an idle or busy writer: the others' new profiles counted in the bounds, expired
   * ones forgotten, segments nobody keeps a profile of deleted, an idle segment closed, one more
   * slot taken once half of its tokens are stored.
   */
  private async maintain (): Promise<void> {
    if (this.maintaining || this.closed) return
    this.maintaining = true
    try {
      await this.refresh()
      this.index.prune(this.clock.now())
      this.closeIdleSegment()
      await this.deleteEmptied()
      if (this.index.size > this.writer.tokens.capacity / 2 && this.slots.list.length > 0) {
        await this.writer.claim(true).catch(() => undefined)
      }
    } finally {
      this.maintaining = false
    }
  }

  private unlinkLater (path: string): void {
    const deleting = removeFile(path, this.log).finally(() => { this.unlinking.delete(deleting) })
    this.unlinking.add(deleting)
  }

  private async removeLegacyIndex (): Promise<void> {
    if (!this.legacyIndex) return
    this.legacyIndex = false
    await removeFile(join(this.directory, LEGACY_INDEX), this.log)
  }

  async load (token: string): Promise<Profile | undefined> {
    if (!TOKEN_PATTERN.test(token)) return undefined
    let entry = this.index.kept(token, this.clock.now())
    if (entry === undefined) {
      // another process's, saved since the last look
      await this.refresh()
      entry = this.index.kept(token, this.clock.now())
    }
    if (entry === undefined) return undefined
    if (entry.batch !== undefined) return JSON.parse(entry.batch.buffer.toString('utf8', entry.offset, entry.offset + entry.length)) as Profile
    const now = this.clock.now()
    const problem = (error: Error): void => {
      this.log.warn({ err: error, token, directory: this.directory }, 'fastify-kernel: a stored profile is corrupt or truncated; answered as not found')
    }
    const segment = entry.segment!
    if (segment === this.legacy) {
      const profile = await readLegacyProfile(this.directory, token, now, problem)
      if (profile === undefined && !existsSync(legacyFile(this.directory, token))) this.index.leave(token, entry)
      return profile
    }
    let text: string | undefined
    try {
      text = await readRecord(this.directory, segment.name, entry.offset, entry.length)
    } catch (error) {
      problem(error as Error)
      return undefined
    }
    // its segment was deleted (its profiles left the bounds, by another process's count; by a person; with the folder)
    if (text === undefined) {
      if (this.index.segments.get(segment.name) === segment) this.index.drop(segment)
      else this.index.leave(token, entry)
      return undefined
    }
    return parseProfile(text, token, problem, now)
  }

  async find (filter: ProfileFilter = {}): Promise<ProfileSummary[]> {
    await this.refresh()
    return selectSummaries(this.index.summaries(this.clock.now()), filter)
  }

  /** Every profile of the folder goes, every writer's: their segments are deleted (a writer starts a new one at its next write). */
  async purge (): Promise<void> {
    this.index.entries.clear()
    // the saves accepted before are settled, unwritten
    await this.idle()
    const current = this.current
    this.current = undefined
    if (current !== undefined) this.writer.open.delete(current.name)
    await current?.handle?.close().catch(() => undefined)
    this.index.clear()
    this.legacy.live = 0
    const names = await readdir(join(this.directory, SEGMENTS)).catch(() => [] as string[])
    await Promise.all(names.filter((name) => parseSegmentName(name) !== undefined).map((name) => removeFile(join(this.directory, SEGMENTS, name), this.log)))
    const legacy = await readdir(this.directory).catch(() => [] as string[])
    await Promise.all(legacy.filter((name) => /^[0-9a-f]{6}\.json$/.test(name) || name === LEGACY_INDEX).map((name) => removeFile(join(this.directory, name), this.log)))
    this.legacyIndex = false
    this.scan.reset()
  }

  /** Settles once the writer has nothing left to do: every profile saved so far is on disk (or its save failed). */
  async idle (): Promise<void> {
    while (this.writing !== undefined || this.filling !== undefined) {
      if (this.writing === undefined) this.flush()
      await this.writing
    }
  }

  async close (): Promise<void> {
    if (this.closed) return
    this.closed = true
    clearInterval(this.timer)
    await this.idle()
    const current = this.current
    this.current = undefined
    if (current !== undefined) this.writer.open.delete(current.name)
    await current?.handle?.close().catch(() => undefined)
    if (current !== undefined && current.live === 0) this.deleteSegment(current)
    await Promise.all(this.unlinking)
    await this.writer.leave(this.slotLost)
  }
}

/** Writes `length` bytes of `buffer` at `position`, as many calls as it takes. */
async function writeFully (handle: FileHandle, buffer: Buffer, length: number, position: number): Promise<void> {
  let written = 0
  while (written < length) {
    const { bytesWritten } = await handle.write(buffer, written, length - written, position + written)
    written += bytesWritten
  }
}
