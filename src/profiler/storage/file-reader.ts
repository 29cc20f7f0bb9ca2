import { resolve } from 'node:path'
import type { Profile, ProfileSummary } from '../profile.js'
import { TOKEN_PATTERN } from '../token.js'
import type { ProfileFilter, ProfileStorage } from './storage.js'
import { selectSummaries } from './storage.js'
import { readFolder, readProfileFile } from './file.js'
import type { StorageLogger } from './file.js'
import { errorCodes } from '../../errors/codes.js'
import type { Clock } from '../../clock.js'

/**
 * A profiler folder read by another process than the one writing it (the console, while the
 * server runs): no lock, no write, no deletion — the writer owns the folder and its index. It
 * reads the folder as it is at each call. It stores nothing: it draws no token, so a request
 * its process serves is not profiled.
 */
export class FileProfileReader implements ProfileStorage {
  readonly kind = 'file'
  private readonly directory: string
  private seen = 0

  constructor (directory: string, private readonly maxAgeMs: number, private readonly log: StorageLogger, private readonly clock: Clock) {
    this.directory = resolve(directory)
  }

  get size (): number {
    return this.seen
  }

  reserveToken (): undefined {
    return undefined
  }

  releaseToken (): void {}

  async save (profile: Profile): Promise<void> {
    throw new errorCodes.KERNEL_INVALID_OPTIONS(`the profiler folder "${this.directory}" is opened read-only here; profile "${profile.token}" is not stored`)
  }

  async load (token: string): Promise<Profile | undefined> {
    if (!TOKEN_PATTERN.test(token)) return undefined
    const now = this.clock.now()
    const profile = await readProfileFile(this.directory, token, now, (error) => {
      this.log.warn({ err: error, token }, 'fastify-kernel: a profile file cannot be read; answered as not found')
    })
    return profile === undefined || now - profile.time > this.maxAgeMs ? undefined : profile
  }

  async find (filter: ProfileFilter = {}): Promise<ProfileSummary[]> {
    const now = this.clock.now()
    let listed: ProfileSummary[]
    try {
      listed = (await readFolder(this.directory, now, this.log)).listed
    } catch (error) {
      // no folder yet: the server has stored nothing
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw error
    }
    const live = listed.filter((summary) => now - summary.time <= this.maxAgeMs)
    this.seen = live.length
    return selectSummaries(live, filter)
  }

  async purge (): Promise<void> {
    throw new errorCodes.KERNEL_INVALID_OPTIONS(`the profiler folder "${this.directory}" is opened read-only here`)
  }

  async close (): Promise<void> {}
}
