import { existsSync, fstatSync } from 'node:fs'
import { mkdir, open, readdir } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { Profile, ProfileSummary } from '../profile.js'
import { summarize } from '../profile.js'
import { parseProfile } from '../profile-shape.js'
import { TOKEN_PATTERN } from '../token.js'
import type { ProfileFilter, ProfileStorage } from './storage.js'
import { LocalTokens, selectSummaries } from './storage.js'
import { FolderLock } from './folder-lock.js'
import type { FolderLockTimings } from './folder-lock.js'
import { LEGACY_INDEX, legacyFile, readLegacyFolder, readLegacyProfile, removeFile } from './legacy-folder.js'
import type { StorageLogger } from './legacy-folder.js'
import { recordBound, segmentNumber, writeRecord } from './segment-format.js'
import { LEGACY, SEGMENTS, SegmentScan, keptProfiles, readRecord, segmentPath } from './segment-scan.js'
import type { Location } from './segment-scan.js'
import type { Clock } from '../../clock.js'
import { systemClock } from '../../clock.js'
import { errorCodes } from '../../errors/codes.js'

export type { StorageLogger } from './legacy-folder.js'

export interface FileStorageOptions {
  /** what dates the profiles' ages (default the system clock) */
  clock?: Clock
  lockTimings?: FolderLockTimings
}

/**
 * A segment is closed once it holds this share of `maxProfiles`, or SEGMENT_BYTES, or is older
 * than this share of `maxAge`: it is deleted as a whole once none of its profiles is kept, so
 * the disk holds up to about a segment's worth more than the bounds say.
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
/** a profile saved and not written yet */
const UNWRITTEN = -1

/** Profiles saved for the same write, as their lines. */
interface Batch {
  buffer: Buffer
  length: number
  saves: QueuedSave[]
}

/**
 * A kept profile: where it is; while it waits for the writer (`segment` UNWRITTEN), `offset`
 * and `length` are its bytes in its batch's buffer.
 */
interface Entry extends Location {
  batch: Batch | undefined
}

interface Segment {
  n: number
  /** kept profiles whose record is in it: at 0 (and not the one written to) it is deleted */
  live: number
  records: number
  /** bytes written (the next record's offset) */
  size: number
  /** on the storage's clock */
  startedAt: number
  /** the segment being written; closed ones have none */
  handle: FileHandle | undefined
  /** a write to it failed: the next write starts another */
  broken: boolean
}

interface QueuedSave {
  token: string
  entry: Entry
  resolve: () => void
  reject: (error: unknown) => void
}

/**
 * Profiles appended to segment files (`segments/<n>.jsonl`, one JSON line per profile: its
 * summary, then the profile), with an index in memory (token → segment, offset, length and
 * summary) that token draws, `find` and the search page read without touching the disk, and
 * that is rebuilt by reading the segments' summaries when the storage opens. The profiles saved
 * in one turn of the event loop go to disk in one write (and those saved while a write is under
 * way, in the next one): a save costs its serialising and its share of a write, not a file. A
 * segment is closed after a share of the bounds and deleted whole once none of its profiles is
 * kept (`maxProfiles` by count, `maxAge` by time); a crash leaves at most a torn last line,
 * which is skipped when the folder is read.
 *
 * A folder an earlier version wrote (a `<token>.json` per profile and `index.jsonl`) is read as
 * it is: its profiles are served until they leave the bounds, and that layout is never written
 * again. One process writes a folder (a lock refuses a second one, clearly); the console reads
 * it meanwhile (`FileProfileReader`).
 */
export class FileProfileStorage implements ProfileStorage {
  readonly kind = 'file'
  /** oldest first: the order of saving */
  private readonly entries = new Map<string, Entry>()
  private readonly segments = new Map<number, Segment>()
  private current: Segment | undefined
  private nextSegment = 1
  /** profiles of the previous layout still kept */
  private legacyCount = 0
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
  private readonly tokens = new LocalTokens((token) => this.entries.has(token))
  private lock: FolderLock | undefined
  /** deletions not awaited by what caused them; close() awaits them */
  private readonly unlinking = new Set<Promise<void>>()

  private constructor (directory: string, private readonly limits: { maxProfiles: number, maxAgeMs: number }, private readonly log: StorageLogger, private readonly clock: Clock) {
    this.directory = resolve(directory)
    this.perSegment = Math.max(1, Math.ceil(limits.maxProfiles / SEGMENTS_PER_BOUND))
    this.segmentMaxAgeMs = limits.maxAgeMs / SEGMENTS_PER_BOUND
    // an idle server still forgets expired profiles, and deletes their segments
    this.timer = setInterval(() => { this.prune(); this.closeIdleSegment() }, Math.max(1000, Math.min(this.segmentMaxAgeMs, 60_000)))
    this.timer.unref()
  }

  /**
   * Opens (creating) the folder, takes its lock (KERNEL_PROFILER_FOLDER_IN_USE while another
   * process writes it), and rebuilds the index from the segments (and from a previous layout's
   * files, if any); what no longer counts is deleted.
   */
  static async open (directory: string, limits: { maxProfiles: number, maxAgeMs: number }, log: StorageLogger, options: FileStorageOptions = {}): Promise<FileProfileStorage> {
    const storage = new FileProfileStorage(directory, limits, log, options.clock ?? systemClock)
    try {
      await mkdir(join(storage.directory, SEGMENTS), { recursive: true })
      storage.lock = await FolderLock.acquire(storage.directory, options.lockTimings ?? {}, (error) => {
        log.warn({ err: error, directory: storage.directory }, 'fastify-kernel: the profiler folder lock was lost; it is taken again before the next write')
      })
      await storage.recover()
    } catch (error) {
      clearInterval(storage.timer)
      await storage.lock?.unlock()
      throw error
    }
    return storage
  }

  get size (): number {
    return this.entries.size
  }

  private expired (summary: ProfileSummary, now = this.clock.now()): boolean {
    return now - summary.time > this.limits.maxAgeMs
  }

  private async recover (): Promise<void> {
    const now = this.clock.now()
    const legacy = await readLegacyFolder(this.directory, now, this.log)
    const scanned = await new SegmentScan(this.directory).read(now)
    // no segment is being written now: a line without its end was torn by a crash
    const skipped = scanned.reduce((sum, segment) => sum + segment.skipped + (segment.torn ? 1 : 0), 0)
    if (skipped > 0) this.log.warn({ directory: this.directory, skipped }, 'fastify-kernel: profiler segments hold torn or corrupt lines (a crash while writing); they are skipped')
    for (const segment of scanned) {
      this.segments.set(segment.n, { n: segment.n, live: 0, records: segment.records.length, size: segment.end, startedAt: now, handle: undefined, broken: false })
      this.nextSegment = segment.n + 1
    }
    for (const [token, location] of keptProfiles(legacy.listed, scanned, now, this.limits)) {
      this.entries.set(token, { ...location, batch: undefined })
      if (location.segment === LEGACY) this.legacyCount++
      else this.segments.get(location.segment)!.live++
    }
    // what no longer counts: segments without a kept profile, the previous layout's files of
    // profiles not kept (expired, beyond the bound, unreadable), its interrupted writes
    for (const segment of [...this.segments.values()]) if (segment.live === 0) this.deleteSegment(segment)
    const dropped = [...legacy.listed.map((summary) => summary.token), ...legacy.unreadable].filter((token) => this.entries.get(token)?.segment !== LEGACY)
    await Promise.all([
      ...dropped.map((token) => removeFile(legacyFile(this.directory, token), this.log)),
      ...legacy.temporary.map((name) => removeFile(join(this.directory, name), this.log))
    ])
    this.legacyIndex = legacy.index
    if (this.legacyCount > 0) {
      this.log.warn({ directory: this.directory, profiles: this.legacyCount }, 'fastify-kernel: the profiler folder holds profiles of the previous layout (a file per profile); they are read until they leave the bounds, and new profiles are appended to its segments')
    } else {
      await this.removeLegacyIndex()
    }
  }

  reserveToken (): string {
    return this.tokens.reserve()
  }

  releaseToken (token: string): void {
    this.tokens.release(token)
  }

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
    const entry: Entry = { summary, segment: UNWRITTEN, offset: start, length: end - start, batch }
    const previous = this.entries.get(token)
    if (previous !== undefined) this.forget(token, previous)
    this.entries.set(token, entry)
    this.prune()
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
    if (!batch.saves.some((save) => this.entries.get(save.token) === save.entry)) {
      for (const save of batch.saves) save.resolve()
      return
    }
    let segment: Segment | undefined
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
        if (this.entries.get(save.token) === save.entry) this.entries.delete(save.token)
        save.reject(error)
      }
      return
    }
    segment.size += batch.length
    segment.records += batch.saves.length
    const n = segment.n
    for (const save of batch.saves) {
      const entry = save.entry
      entry.batch = undefined
      // dropped or replaced meanwhile: its line stays, unread, until its segment goes
      if (this.entries.get(save.token) === entry) {
        entry.segment = n
        entry.offset += position
        segment.live++
      }
      save.resolve()
    }
  }

  /**
   * The segment to append to: the current one, unless it is full, too old, broken or was
   * deleted under the storage (then another is started); before that, the folder exists (it is
   * created again if it was deleted) and this process holds its lock (taken again if it was lost).
   */
  private async segmentToWrite (): Promise<Segment> {
    const segment = this.current
    if (segment !== undefined) {
      // deleted under the storage (the folder, or the segment alone): its profiles are gone; an
      // inode without a name has no link left (fstat reads memory, not the disk)
      if (fstatSync(segment.handle!.fd).nlink === 0) {
        this.current = undefined
        await segment.handle!.close().catch(() => undefined)
        const folderGone = !existsSync(this.directory)
        // what was in it (in all of them, with the folder) is not listed any more
        for (const [token, entry] of this.entries) {
          if (entry.segment === segment.n || (folderGone && entry.segment !== UNWRITTEN)) this.entries.delete(token)
        }
        if (folderGone) {
          this.log.warn({ directory: this.directory }, 'fastify-kernel: the profiler folder was deleted; it is created again')
          this.segments.clear()
          this.legacyCount = 0
          this.legacyIndex = false
          await this.lock?.unlock()
        } else {
          this.segments.delete(segment.n)
        }
      } else {
        const full = segment.broken || segment.records >= this.perSegment || segment.size >= SEGMENT_BYTES || this.clock.now() - segment.startedAt >= this.segmentMaxAgeMs
        if (full) await this.retire(segment)
        // the folder is there (the segment has its name): no need to create it
        if (this.lock?.held === true) return full ? await this.startSegment() : segment
      }
    }
    // the first write, after an idle close or a purge, or the folder deleted: it exists, and is locked
    await mkdir(join(this.directory, SEGMENTS), { recursive: true })
    if (this.lock?.held !== true) await this.lock?.take()
    return this.current ?? await this.startSegment()
  }

  private async startSegment (): Promise<Segment> {
    for (;;) {
      const n = this.nextSegment++
      try {
        const handle = await open(segmentPath(this.directory, n), 'wx')
        const segment: Segment = { n, live: 0, records: 0, size: 0, startedAt: this.clock.now(), handle, broken: false }
        this.segments.set(n, segment)
        this.current = segment
        return segment
      } catch (error) {
        // a segment of that number left by someone else: the next number
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
    }
  }

  /** No longer written to: closed, and deleted if no profile in it is kept. */
  private async retire (segment: Segment): Promise<void> {
    if (this.current === segment) this.current = undefined
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

  private deleteSegment (segment: Segment): void {
    this.segments.delete(segment.n)
    this.unlinkLater(segmentPath(this.directory, segment.n))
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

  /** A kept profile leaves: its segment is deleted once none of its profiles is kept; a previous layout's file at once. */
  private forget (token: string, entry: Entry): void {
    this.entries.delete(token)
    if (entry.segment === LEGACY) {
      this.unlinkLater(legacyFile(this.directory, token))
      if (--this.legacyCount === 0) this.removeLegacyIndex().catch(() => undefined)
      return
    }
    // not written yet: the writer skips it
    if (entry.segment === UNWRITTEN) return
    const segment = this.segments.get(entry.segment)
    if (segment !== undefined && --segment.live === 0 && segment !== this.current) this.deleteSegment(segment)
  }

  /** The oldest profiles beyond the count, and every expired one, leave. */
  private prune (): void {
    const now = this.clock.now()
    for (const [token, entry] of this.entries) {
      if (this.entries.size <= this.limits.maxProfiles && !this.expired(entry.summary, now)) break
      this.forget(token, entry)
    }
  }

  async load (token: string): Promise<Profile | undefined> {
    if (!TOKEN_PATTERN.test(token)) return undefined
    const entry = this.entries.get(token)
    if (entry === undefined || this.expired(entry.summary)) return undefined
    if (entry.batch !== undefined) return JSON.parse(entry.batch.buffer.toString('utf8', entry.offset, entry.offset + entry.length)) as Profile
    const now = this.clock.now()
    const problem = (error: Error): void => {
      this.log.warn({ err: error, token, directory: this.directory }, 'fastify-kernel: a stored profile is corrupt or truncated; answered as not found')
    }
    if (entry.segment === LEGACY) {
      const profile = await readLegacyProfile(this.directory, token, now, problem)
      if (profile === undefined && !existsSync(legacyFile(this.directory, token))) this.forget(token, entry)
      return profile
    }
    let text: string | undefined
    try {
      text = await readRecord(this.directory, entry)
    } catch (error) {
      problem(error as Error)
      return undefined
    }
    // its segment was deleted (by a person, or with the folder)
    if (text === undefined) {
      if (this.entries.get(token) === entry) this.forget(token, entry)
      return undefined
    }
    return parseProfile(text, token, problem, now)
  }

  async find (filter: ProfileFilter = {}): Promise<ProfileSummary[]> {
    const now = this.clock.now()
    const live: ProfileSummary[] = []
    for (const entry of this.entries.values()) if (!this.expired(entry.summary, now)) live.push(entry.summary)
    return selectSummaries(live, filter)
  }

  async purge (): Promise<void> {
    this.entries.clear()
    this.legacyCount = 0
    // the saves accepted before are settled, unwritten
    await this.idle()
    const current = this.current
    this.current = undefined
    await current?.handle?.close().catch(() => undefined)
    this.segments.clear()
    const names = await readdir(join(this.directory, SEGMENTS)).catch(() => [] as string[])
    await Promise.all(names.filter((name) => segmentNumber(name) !== undefined).map((name) => removeFile(join(this.directory, SEGMENTS, name), this.log)))
    const legacy = await readdir(this.directory).catch(() => [] as string[])
    await Promise.all(legacy.filter((name) => /^[0-9a-f]{6}\.json$/.test(name) || name === LEGACY_INDEX).map((name) => removeFile(join(this.directory, name), this.log)))
    this.legacyIndex = false
  }

  /** Settles once the writer has nothing left to do: every profile saved so far is on disk (or its save failed). */
  async idle (): Promise<void> {
    while (this.writing !== undefined || this.filling !== undefined) {
      if (this.writing === undefined) this.flush()
      await this.writing
    }
  }

  async close (): Promise<void> {
    clearInterval(this.timer)
    await this.idle()
    const current = this.current
    this.current = undefined
    await current?.handle?.close().catch(() => undefined)
    await Promise.all(this.unlinking)
    await this.lock?.unlock()
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
