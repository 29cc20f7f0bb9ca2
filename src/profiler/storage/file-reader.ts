import { resolve } from 'node:path'
import type { Profile, ProfileSummary } from '../profile.js'
import { parseProfile } from '../profile-shape.js'
import { TOKEN_PATTERN } from '../token.js'
import type { ProfileFilter, ProfileStorage } from './storage.js'
import { selectSummaries } from './storage.js'
import { readLegacyFolder, readLegacyProfile } from './legacy-folder.js'
import type { StorageLogger } from './legacy-folder.js'
import { SegmentScan, readRecord } from './segment-scan.js'
import { FolderIndex, legacySegment } from './folder-index.js'
import type { IndexEntry, SegmentState } from './folder-index.js'
import { errorCodes } from '../../errors/codes.js'
import type { Clock } from '../../clock.js'

/**
 * A profiler folder read without writing it (the console, while servers, workers and commands
 * write it): no slot, no write, no deletion. Each call reads what every writer's segments
 * gained since the last one (a record being written right now is not whole yet, and is skipped
 * until it is), and keeps what the writers keep: the same bounds applied to the same records.
 * It stores nothing: it draws no token, so a request its process serves is not profiled.
 */
export class FileProfileReader implements ProfileStorage {
  readonly kind = 'file'
  private readonly directory: string
  private readonly scan: SegmentScan
  private readonly index: FolderIndex
  private readonly legacy = legacySegment()
  private legacyRead = false

  constructor (directory: string, limits: { maxProfiles: number, maxAgeMs: number }, private readonly log: StorageLogger, private readonly clock: Clock) {
    this.directory = resolve(directory)
    this.scan = new SegmentScan(this.directory)
    this.index = new FolderIndex(limits)
  }

  get size (): number {
    return this.index.size
  }

  reserveToken (): undefined {
    return undefined
  }

  releaseToken (): void {}

  async save (profile: Profile): Promise<void> {
    throw new errorCodes.KERNEL_INVALID_OPTIONS(`the profiler folder "${this.directory}" is opened read-only here; profile "${profile.token}" is not stored`)
  }

  /** What the folder keeps now; nothing when it does not exist yet (no process has stored anything). */
  private async refresh (now: number): Promise<void> {
    if (!this.legacyRead) {
      try {
        const legacy = await readLegacyFolder(this.directory, now, this.log)
        for (const summary of legacy.listed) if (!this.index.expired(summary, now)) this.index.add(this.entry(summary, this.legacy, 0, 0), now)
        this.legacyRead = true
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      }
    }
    this.index.merge(await this.scan.read(now), now, this.entry)
    this.index.prune(now)
  }

  private readonly entry = (summary: ProfileSummary, segment: SegmentState, offset: number, length: number): IndexEntry => ({ summary, segment, offset, length })

  async load (token: string): Promise<Profile | undefined> {
    if (!TOKEN_PATTERN.test(token)) return undefined
    const now = this.clock.now()
    await this.refresh(now)
    const entry = this.index.kept(token, now)
    if (entry === undefined) return undefined
    const problem = (error: Error): void => {
      this.log.warn({ err: error, token }, 'fastify-kernel: a stored profile cannot be read; answered as not found')
    }
    if (entry.segment === this.legacy) return await readLegacyProfile(this.directory, token, now, problem)
    // undefined: a writer deleted its segment meanwhile (its profiles left the bounds)
    const text = await readRecord(this.directory, entry.segment!.name, entry.offset, entry.length)
    return text === undefined ? undefined : parseProfile(text, token, problem, now)
  }

  async find (filter: ProfileFilter = {}): Promise<ProfileSummary[]> {
    const now = this.clock.now()
    await this.refresh(now)
    return selectSummaries(this.index.summaries(now), filter)
  }

  async purge (): Promise<void> {
    throw new errorCodes.KERNEL_INVALID_OPTIONS(`the profiler folder "${this.directory}" is opened read-only here`)
  }

  async close (): Promise<void> {}
}
