import { resolve } from 'node:path'
import type { Profile, ProfileSummary } from '../profile.js'
import { parseProfile } from '../profile-shape.js'
import { TOKEN_PATTERN } from '../token.js'
import type { ProfileFilter, ProfileStorage } from './storage.js'
import { selectSummaries } from './storage.js'
import { readLegacyFolder, readLegacyProfile } from './legacy-folder.js'
import type { StorageLogger } from './legacy-folder.js'
import { LEGACY, SegmentScan, keptProfiles, readRecord } from './segment-scan.js'
import type { Location } from './segment-scan.js'
import { errorCodes } from '../../errors/codes.js'
import type { Clock } from '../../clock.js'

/**
 * A profiler folder read by another process than the one writing it (the console, while the
 * server runs): no lock, no write, no deletion — the writer owns the folder. Each call reads
 * what the segments gained since the last one (a record the server is writing right now is
 * not whole yet, and is skipped until it is), and keeps what the writer keeps: the same bounds
 * applied to the same records. It stores nothing: it draws no token, so a unit its process
 * runs is not profiled.
 */
export class FileProfileReader implements ProfileStorage {
  readonly kind = 'file'
  private readonly directory: string
  private readonly scan: SegmentScan
  private seen = 0

  constructor (directory: string, private readonly limits: { maxProfiles: number, maxAgeMs: number }, private readonly log: StorageLogger, private readonly clock: Clock) {
    this.directory = resolve(directory)
    this.scan = new SegmentScan(this.directory)
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

  /** What the folder keeps now; none when it does not exist yet (the server has stored nothing). */
  private async kept (now: number): Promise<Map<string, Location>> {
    let legacy: ProfileSummary[]
    try {
      legacy = (await readLegacyFolder(this.directory, now, this.log)).listed
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map()
      throw error
    }
    const kept = keptProfiles(legacy, await this.scan.read(now), now, this.limits)
    this.seen = kept.size
    return kept
  }

  async load (token: string): Promise<Profile | undefined> {
    if (!TOKEN_PATTERN.test(token)) return undefined
    const now = this.clock.now()
    const location = (await this.kept(now)).get(token)
    if (location === undefined) return undefined
    const problem = (error: Error): void => {
      this.log.warn({ err: error, token }, 'fastify-kernel: a stored profile cannot be read; answered as not found')
    }
    if (location.segment === LEGACY) return await readLegacyProfile(this.directory, token, now, problem)
    // undefined: the writer deleted its segment meanwhile (its profiles left the bounds)
    const text = await readRecord(this.directory, location)
    return text === undefined ? undefined : parseProfile(text, token, problem, now)
  }

  async find (filter: ProfileFilter = {}): Promise<ProfileSummary[]> {
    const kept = await this.kept(this.clock.now())
    return selectSummaries([...kept.values()].map((location) => location.summary), filter)
  }

  async purge (): Promise<void> {
    throw new errorCodes.KERNEL_INVALID_OPTIONS(`the profiler folder "${this.directory}" is opened read-only here`)
  }

  async close (): Promise<void> {}
}
