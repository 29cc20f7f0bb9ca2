import { appendFile, mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { Profile, ProfileSummary } from '../profile.js'
import { summarize } from '../profile.js'
import { isSummary, parseProfile } from '../profile-shape.js'
import { TOKEN_PATTERN } from '../token.js'
import type { ProfileFilter, ProfileStorage } from './storage.js'
import { LocalTokens, selectSummaries } from './storage.js'
import { FolderLock } from './folder-lock.js'
import type { FolderLockTimings } from './folder-lock.js'
import type { Clock } from '../../clock.js'
import { systemClock } from '../../clock.js'
import { errorCodes } from '../../errors/codes.js'

export interface StorageLogger {
  warn: (fields: object, message: string) => void
}

export interface FileStorageOptions {
  /** what dates the profiles' ages (default the system clock) */
  clock?: Clock
  lockTimings?: FolderLockTimings
}

const INDEX = 'index.jsonl'
const PROFILE_FILE = /^[0-9a-f]{6}\.json$/
/** profiles written at once (each a temporary file and a rename, through libuv's threads) */
const WRITE_BATCH = 16

/** The first `count` of `items`. */
function * take<T> (items: Iterable<T>, count: number): Generator<T> {
  if (count <= 0) return
  for (const item of items) {
    yield item
    if (--count === 0) return
  }
}

const missing = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === 'ENOENT'

/**
 * What a profiler folder holds: its index replayed (a summary line per save, a `del` line per
 * purge), and every profile file the index does not list read back (its line was lost to a
 * failed append, or dated wrongly: a profile that can still be read is never lost for the
 * index's sake). Only profiles whose file exists; expiry is the caller's. Reads only.
 */
export async function readFolder (directory: string, now: number, log: StorageLogger): Promise<{ listed: ProfileSummary[], names: string[] }> {
  let text = ''
  try {
    text = await readFile(join(directory, INDEX), 'utf8')
  } catch (error) {
    if (!missing(error)) log.warn({ err: error }, 'fastify-kernel: the profiler index cannot be read; profiles are read back from their files')
  }
  const byToken = new Map<string, ProfileSummary>()
  for (const line of text.split('\n')) {
    if (line === '') continue
    let record: unknown
    try { record = JSON.parse(line) } catch { continue } // a line torn by a crash or a full disk
    if (typeof (record as { del?: unknown }).del === 'string') byToken.delete((record as { del: string }).del)
    else if (isSummary(record, now)) { byToken.delete(record.token); byToken.set(record.token, record) }
  }
  const names = await readdir(directory)
  const files = new Set(names.filter((name) => PROFILE_FILE.test(name)).map((name) => name.slice(0, 6)))
  const listed = [...byToken.values()].filter((summary) => files.has(summary.token))
  for (const token of files) {
    if (byToken.has(token)) continue
    const profile = await readProfileFile(directory, token, now, () => undefined)
    if (profile !== undefined) listed.push(summarize(profile))
  }
  return { listed, names }
}

/** A profile file, parsed and checked; undefined when it is missing or not one (`problem` says why). */
export async function readProfileFile (directory: string, token: string, now: number, problem: (error: Error) => void): Promise<Profile | undefined> {
  let text: string
  try {
    text = await readFile(join(directory, `${token}.json`), 'utf8')
  } catch (error) {
    if (!missing(error)) problem(error as Error)
    return undefined
  }
  return parseProfile(text, token, problem, now)
}

/**
 * One JSON file per profile plus an append-only index (`index.jsonl`: a summary line per save,
 * a `{"del": token}` line per purge), mirrored in memory so that token draws and `find` never
 * touch the disk. Profiles are written to a temporary file and renamed, so a crash never leaves
 * a half-written profile; the index is rewritten (also atomically) only when it has grown to
 * twice the number of kept profiles, not on every request.
 *
 * One process writes a folder (a lock refuses a second one, clearly). What the disk refuses is
 * retried rather than lost: index lines that could not be appended are kept for the next
 * flush, a folder deleted under the storage is recreated, and a profile file the index does
 * not list is read back at the next start rather than deleted.
 */
export class FileProfileStorage implements ProfileStorage {
  readonly kind = 'file'
  /** oldest first: the order of saving */
  private readonly entries = new Map<string, ProfileSummary>()
  private readonly directory: string
  private pendingLines: string[] = []
  private indexLines = 0
  private chain: Promise<void> = Promise.resolve()
  private counter = 0
  private readonly timer: NodeJS.Timeout
  /** profiles saved but not on disk yet, readable meanwhile */
  private readonly unwritten = new Map<string, string>()
  /** profiles waiting for the writer, by token, oldest first */
  private readonly writeQueue = new Map<string, { token: string, json: string, summary: ProfileSummary, resolve: () => void, reject: (error: unknown) => void }>()
  private writing = false
  private drained: Promise<void> = Promise.resolve()
  private readonly tokens = new LocalTokens((token) => this.entries.has(token))
  private lock: FolderLock | undefined
  /** the folder being created and its lock taken, for the writes waiting on it */
  private folderReady: Promise<void> | undefined
  /** the last index append failed: the next one starts on a fresh line (the failed one may be torn) */
  private indexTorn = false
  /** deletions of purged profiles, not awaited by the save that purged them; close() awaits them */
  private readonly unlinking = new Set<Promise<void>>()

  private constructor (directory: string, private readonly limits: { maxProfiles: number, maxAgeMs: number }, private readonly log: StorageLogger, private readonly clock: Clock) {
    this.directory = resolve(directory)
    // an idle server still forgets expired profiles
    this.timer = setInterval(() => { this.prune(); this.flush().catch(() => undefined) }, Math.min(limits.maxAgeMs, 60_000))
    this.timer.unref()
  }

  /**
   * Opens (creating) the folder, takes its lock (KERNEL_PROFILER_FOLDER_IN_USE while another process writes
   * it), reloads the index, and reconciles the folder with it.
   */
  static async open (directory: string, limits: { maxProfiles: number, maxAgeMs: number }, log: StorageLogger, options: FileStorageOptions = {}): Promise<FileProfileStorage> {
    const storage = new FileProfileStorage(directory, limits, log, options.clock ?? systemClock)
    try {
      await mkdir(storage.directory, { recursive: true })
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

  private file (token: string): string {
    return join(this.directory, `${token}.json`)
  }

  private expired (summary: ProfileSummary, now = this.clock.now()): boolean {
    return now - summary.time > this.limits.maxAgeMs
  }

  private async recover (): Promise<void> {
    const now = this.clock.now()
    const { listed, names } = await readFolder(this.directory, now, this.log)
    const kept = listed
      .filter((summary) => !this.expired(summary, now))
      .sort((a, b) => a.time - b.time)
      .slice(-this.limits.maxProfiles)
    for (const summary of kept) this.entries.set(summary.token, summary)
    // expired, beyond the bound, or unreadable; and temporary files of interrupted writes
    await Promise.all(names
      .filter((name) => name.endsWith('.tmp') || (PROFILE_FILE.test(name) && !this.entries.has(name.slice(0, 6))))
      .map((name) => unlink(join(this.directory, name)).catch(() => undefined)))
    await this.rewriteIndex()
  }

  /**
   * Before a write: the folder exists (it is recreated if it was deleted) and this process holds
   * its lock (taken again if it was lost). Throws when another process took the folder meanwhile.
   * The writes of a batch run side by side: one of them takes the lock, the others wait for it.
   */
  private async ensureFolder (): Promise<void> {
    if (this.lock?.held === true) return
    this.folderReady ??= (async () => {
      await mkdir(this.directory, { recursive: true })
      await this.lock?.take()
    })().finally(() => { this.folderReady = undefined })
    await this.folderReady
  }

  /** Runs a write; if the folder vanished under it, recreates the folder and tries once more. */
  private async inFolder<T> (write: () => Promise<T>): Promise<T> {
    await this.ensureFolder()
    try {
      return await write()
    } catch (error) {
      if (!missing(error)) throw error
      // the first write of a batch to find the folder gone recreates it; the others wait for that
      if (this.folderReady === undefined) {
        this.log.warn({ directory: this.directory }, 'fastify-kernel: the profiler folder was deleted; it is created again')
        this.folderReady = (async () => {
          await this.lock?.unlock()
          await mkdir(this.directory, { recursive: true })
          await this.lock?.take()
        })().finally(() => { this.folderReady = undefined })
      }
      await this.folderReady
      return await write()
    }
  }

  reserveToken (): string {
    return this.tokens.reserve()
  }

  releaseToken (token: string): void {
    this.tokens.release(token)
  }

  /**
   * Queues the profile for the writer and makes it visible at once (`has`, `find`, `load`); the
   * promise settles when its file is on disk. Serialising happens here, on the caller's tick.
   */
  async save (profile: Profile): Promise<void> {
    const token = profile.token
    if (!TOKEN_PATTERN.test(token)) throw new errorCodes.KERNEL_INVALID_TOKEN(token)
    const json = JSON.stringify(profile)
    const summary = summarize(profile)
    this.unwritten.set(token, json)
    this.entries.delete(token)
    this.entries.set(token, summary)
    this.prune()
    await new Promise<void>((resolve, reject) => {
      // the same token saved again before its turn: the later profile replaces it, as in `entries`
      this.writeQueue.get(token)?.resolve()
      this.writeQueue.set(token, { token, json, summary, resolve, reject })
      this.drain()
    })
  }

  /**
   * The writer: what is queued, in batches of WRITE_BATCH written together (temporary file, then
   * rename; libuv's threads do them side by side), the index lines of a batch in one append,
   * then a pause as long as the batch took. Creating a file costs 0.1 to 0.6 ms of kernel time on
   * a VM's ext4: written as fast as requests come, the disk work would take the CPU the requests
   * need; this way it gets at most about half of the time. Under a load beyond that, the
   * profiles the count bound purged before their turn are skipped, not written: the queue holds
   * at most about `maxProfiles` of them, and every one was readable while it was kept.
   */
  private drain (): void {
    if (this.writing) return
    this.writing = true
    this.drained = (async () => {
      while (this.writeQueue.size > 0) {
        // the real time, not the clock: the pause measures what the disk really cost
        const started = performance.now()
        const batch = [...take(this.writeQueue.values(), WRITE_BATCH)]
        for (const item of batch) this.writeQueue.delete(item.token)
        let wrote = false
        const outcomes = await Promise.all(batch.map(async (item) => {
          try {
            if (this.entries.has(item.token)) {
              wrote = true
              await this.writeProfile(item.token, item.json, item.summary)
            }
            return undefined
          } catch (error) {
            return { error }
          } finally {
            this.unwritten.delete(item.token)
          }
        }))
        if (this.pendingLines.length >= 64 || this.writeQueue.size === 0) await this.flush()
        // settled once the batch's index lines are appended (when it was the last one)
        batch.forEach((item, i) => { const failed = outcomes[i]; if (failed === undefined) item.resolve(); else item.reject(failed.error) })
        const spent = performance.now() - started
        if (wrote && this.writeQueue.size > 0) await new Promise((resolve) => setTimeout(resolve, spent))
      }
      this.writing = false
    })()
  }

  private async writeProfile (token: string, json: string, summary: ProfileSummary): Promise<void> {
    const temporary = join(this.directory, `.${token}.${process.pid}.${++this.counter}.tmp`)
    try {
      await this.inFolder(async () => {
        await writeFile(temporary, json)
        await rename(temporary, this.file(token))
      })
    } catch (error) {
      await unlink(temporary).catch(() => undefined)
      this.entries.delete(token)
      throw error
    }
    // purged while it was being written: the file goes too
    if (!this.entries.has(token)) await unlink(this.file(token)).catch(() => undefined)
    else this.pendingLines.push(JSON.stringify(summary) + '\n')
  }

  /** Purges the oldest profiles beyond the count and every expired one. */
  private prune (): void {
    const now = this.clock.now()
    for (const [token, summary] of this.entries) {
      if (this.entries.size <= this.limits.maxProfiles && !this.expired(summary, now)) break
      this.entries.delete(token)
      // not written yet: it leaves the queue, its save settled (it was kept, readable, until
      // the bound dropped it); one being written is deleted by the writer once written
      if (this.unwritten.has(token)) {
        const queued = this.writeQueue.get(token)
        if (queued !== undefined) {
          this.writeQueue.delete(token)
          this.unwritten.delete(token)
          queued.resolve()
        }
        continue
      }
      this.pendingLines.push(`{"del":"${token}"}\n`)
      const deleting = unlink(this.file(token)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') this.log.warn({ err: error, token }, 'fastify-kernel: cannot delete an old profile')
      }).finally(() => { this.unlinking.delete(deleting) })
      this.unlinking.add(deleting)
    }
  }

  /**
   * Appends the pending index lines; one write at a time, later lines batched into it. Lines a
   * failed append could not write stay pending for the next flush; when too many wait (a disk
   * full for long), the next success rewrites the whole index instead.
   */
  private flush (): Promise<void> {
    this.chain = this.chain.then(async () => {
      if (this.pendingLines.length === 0) return
      const lines = this.pendingLines
      this.pendingLines = []
      try {
        if (lines.length > this.limits.maxProfiles) {
          await this.inFolder(() => this.rewriteIndex())
        } else {
          await this.inFolder(() => appendFile(join(this.directory, INDEX), (this.indexTorn ? '\n' : '') + lines.join('')))
          this.indexLines += lines.length
          if (this.indexLines > 2 * this.limits.maxProfiles + 64) await this.rewriteIndex()
        }
        if (this.indexTorn) this.log.warn({}, 'fastify-kernel: the profiler index is written again')
        this.indexTorn = false
      } catch (error) {
        this.pendingLines = lines.concat(this.pendingLines)
        // once per outage, not once per save
        if (!this.indexTorn) this.log.warn({ err: error }, 'fastify-kernel: cannot write the profiler index; its lines are kept and retried')
        this.indexTorn = true
      }
    })
    return this.chain
  }

  private async rewriteIndex (): Promise<void> {
    const temporary = join(this.directory, `.${INDEX}.${process.pid}.${++this.counter}.tmp`)
    try {
      await writeFile(temporary, [...this.entries.values()].map((summary) => JSON.stringify(summary) + '\n').join(''))
      await rename(temporary, join(this.directory, INDEX))
    } catch (error) {
      await unlink(temporary).catch(() => undefined)
      throw error
    }
    this.indexLines = this.entries.size
  }

  async load (token: string): Promise<Profile | undefined> {
    if (!TOKEN_PATTERN.test(token)) return undefined
    const summary = this.entries.get(token)
    if (summary === undefined || this.expired(summary)) return undefined
    const queued = this.unwritten.get(token)
    if (queued !== undefined) return JSON.parse(queued) as Profile
    let text: string
    try {
      text = await readFile(this.file(token), 'utf8')
    } catch (error) {
      if (missing(error)) this.entries.delete(token) // its folder was deleted, or a person removed it
      else this.log.warn({ err: error, token }, 'fastify-kernel: cannot read a profile')
      return undefined
    }
    return parseProfile(text, token, (error) => {
      this.log.warn({ err: error, token, file: this.file(token) }, 'fastify-kernel: a profile file is corrupt or truncated; answered as not found')
    }, this.clock.now())
  }

  async find (filter: ProfileFilter = {}): Promise<ProfileSummary[]> {
    const now = this.clock.now()
    const live: ProfileSummary[] = []
    for (const summary of this.entries.values()) if (!this.expired(summary, now)) live.push(summary)
    return selectSummaries(live, filter)
  }

  async purge (): Promise<void> {
    const tokens = [...this.entries.keys()]
    this.entries.clear()
    await this.drained
    this.pendingLines = []
    await this.chain
    await Promise.all(tokens.map((token) => unlink(this.file(token)).catch(() => undefined)))
    this.chain = this.chain.then(() => this.inFolder(() => this.rewriteIndex()))
    await this.chain
  }

  /**
   * Settles once the writer has nothing left to do: every profile saved so far is on disk and
   * its index line appended (or kept for the next flush, if the append failed).
   */
  async idle (): Promise<void> {
    await this.drained
    await this.chain
  }

  async close (): Promise<void> {
    clearInterval(this.timer)
    await this.drained
    await this.flush()
    await Promise.all(this.unlinking)
    await this.lock?.unlock()
  }
}
