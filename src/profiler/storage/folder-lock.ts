import { hostname } from 'node:os'
import { readFile, rmdir, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import lockfile from 'proper-lockfile'
import { errorCodes } from '../../errors/codes.js'

const LOCK = '.lock'
const OWNER = '.owner.json'
/** held while the lock is taken and its owner noted, so that both always agree for others */
const OWNER_LOCK = '.owner.lock'

interface Owner { host?: unknown, pid?: unknown, since?: unknown }

/** Folders this process holds: a lock naming this process's id but not held is a predecessor's. */
const heldHere = new Set<string>()

/**
 * Whether the lock's noted owner is a process of this host that no longer runs: a crash
 * (SIGKILL, OOM killer) leaves the lock behind, fresh for up to `staleMs`. Another host's
 * process ids say nothing here (a shared volume), so its locks wait until they go stale.
 */
function deadOwner (owner: Owner, directory: string): boolean {
  if (owner.host !== hostname() || typeof owner.pid !== 'number' || !Number.isInteger(owner.pid) || owner.pid <= 0) return false
  // a container restarted keeps its host name and often its process ids: our own id, when we
  // hold no lock on the folder, was our predecessor's
  if (owner.pid === process.pid) return !heldHere.has(directory)
  try {
    process.kill(owner.pid, 0)
    return false
  } catch (error) {
    // EPERM: it runs, as another user
    return (error as NodeJS.ErrnoException).code === 'ESRCH'
  }
}

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
 * across containers sharing a volume, where process ids say nothing. On the same host, a lock
 * whose noted process is gone (killed) is taken over at once rather than after `staleMs`.
 */
export class FolderLock {
  private release: (() => Promise<void>) | undefined
  /** which take() a compromise report is about: a stale report must not drop a newer lock */
  private generation = 0

  private readonly directory: string

  private constructor (directory: string, private readonly timings: FolderLockTimings, private readonly compromised: (error: Error) => void) {
    this.directory = resolve(directory)
  }

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
    const lockOptions: lockfile.LockOptions = {
      lockfilePath: join(this.directory, LOCK),
      realpath: false,
      stale: staleMs,
      update: Math.min(this.timings.updateMs ?? staleMs / 2, staleMs / 2),
      onCompromised: (error) => {
        if (generation !== this.generation) return
        this.release = undefined
        heldHere.delete(this.directory)
        this.compromised(error)
      }
    }
    // a few milliseconds, long enough for another process to take the lock and note itself
    const releaseOwner = await lockfile.lock(join(this.directory, OWNER), {
      lockfilePath: join(this.directory, OWNER_LOCK),
      realpath: false,
      stale: 5000,
      retries: { retries: 40, minTimeout: 10, maxTimeout: 250 },
      onCompromised: () => {}
    })
    try {
      try {
        this.release = await lockfile.lock(this.directory, lockOptions)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error
        const owner: Owner = await readFile(join(this.directory, OWNER), 'utf8').then((text) => JSON.parse(text) as Owner, () => ({}))
        if (!deadOwner(owner, this.directory)) {
          const who = owner.pid === undefined ? 'another process' : `process ${String(owner.pid)} on host "${String(owner.host)}" (since ${String(owner.since)})`
          throw new errorCodes.KERNEL_PROFILER_FOLDER_IN_USE(who, { cause: error })
        }
        await rmdir(join(this.directory, LOCK)).catch(() => undefined)
        this.release = await lockfile.lock(this.directory, lockOptions)
      }
      heldHere.add(this.directory)
      await writeFile(join(this.directory, OWNER), JSON.stringify({ host: hostname(), pid: process.pid, since: new Date().toISOString() }))
    } finally {
      await releaseOwner().catch(() => undefined)
    }
  }

  async unlock (): Promise<void> {
    const release = this.release
    this.release = undefined
    if (release !== undefined) heldHere.delete(this.directory)
    await release?.().catch(() => undefined)
  }
}
