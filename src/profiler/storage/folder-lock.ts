import { hostname } from 'node:os'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import lockfile from 'proper-lockfile'
import { errorCodes } from '../../errors/codes.js'

const LOCK = '.lock'
const OWNER = '.owner.json'

export interface FolderLockTimings {
  /** a lock not refreshed for this long is a crashed owner's, and may be taken (default 10 s; at least 5 s) */
  staleMs?: number
  /** how often the owner refreshes it (default half of staleMs) */
  updateMs?: number
}

/**
 * One process writes a profiler folder: the file storage keeps its index in memory, so a second
 * writer would lose, delete or swap the other's profiles. The lock is proper-lockfile's (an
 * atomic mkdir, its mtime refreshed while the owner lives, so a crashed owner's lock goes
 * stale and is taken over); who holds it is noted beside it for the refusal message. It works
 * across containers sharing a volume, where process ids say nothing.
 */
export class FolderLock {
  private release: (() => Promise<void>) | undefined
  /** which take() a compromise report is about: a stale report must not drop a newer lock */
  private generation = 0

  private constructor (private readonly directory: string, private readonly timings: FolderLockTimings, private readonly compromised: (error: Error) => void) {}

  static async acquire (directory: string, timings: FolderLockTimings, compromised: (error: Error) => void): Promise<FolderLock> {
    const lock = new FolderLock(directory, timings, compromised)
    await lock.take()
    return lock
  }

  get held (): boolean {
    return this.release !== undefined
  }

  /** Takes the lock (again, after it was lost); KERNEL_PROFILER_FOLDER_IN_USE while another process holds it. */
  async take (): Promise<void> {
    const staleMs = Math.max(5000, this.timings.staleMs ?? 10_000)
    const generation = ++this.generation
    try {
      this.release = await lockfile.lock(this.directory, {
        lockfilePath: join(this.directory, LOCK),
        realpath: false,
        stale: staleMs,
        update: Math.min(this.timings.updateMs ?? staleMs / 2, staleMs / 2),
        onCompromised: (error) => {
          if (generation !== this.generation) return
          this.release = undefined
          this.compromised(error)
        }
      })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error
      const owner: { host?: string, pid?: number, since?: string } = await readFile(join(this.directory, OWNER), 'utf8').then((text) => JSON.parse(text) as object, () => ({}))
      const who = owner.pid === undefined ? 'another process' : `process ${owner.pid} on host "${String(owner.host)}" (since ${String(owner.since)})`
      throw new errorCodes.KERNEL_PROFILER_FOLDER_IN_USE(who, { cause: error })
    }
    await writeFile(join(this.directory, OWNER), JSON.stringify({ host: hostname(), pid: process.pid, since: new Date().toISOString() }))
  }

  async unlock (): Promise<void> {
    const release = this.release
    this.release = undefined
    await release?.().catch(() => undefined)
  }
}
