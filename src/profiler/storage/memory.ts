import { LRUCache } from 'lru-cache'
import type { Clock } from '../../clock.js'
import { lruCacheClock, systemClock } from '../../clock.js'
import type { Profile, ProfileSummary } from '../profile.js'
import { summarize, upgradeSummary } from '../profile.js'
import type { Recording } from '../recording.js'
import type { ProfileFilter, RecordingBuilder, RecordingKeeper } from './storage.js'
import { LocalTokens, selectSummaries } from './storage.js'
import { jsonSizeBound } from './json-size.js'
import { recordingSize, shrinkRecording } from '../recording-size.js'

export { recordingSize }

/** A recording kept as it ended (built on read), or a profile saved as built (`save`). */
interface Entry {
  recording: Recording | undefined
  profile: Profile | undefined
  /** made once, when first listed */
  summary: ProfileSummary | undefined
  /** the summary with the figures only a built profile tells (its panels', its flags): made once, when first asked */
  figured: ProfileSummary | undefined
  /** an estimate of what it holds, in bytes: what `maxBytes` counts */
  size: number
}

/**
 * Profiles in memory (the plugin's default): the recordings themselves, kept as their units
 * ended, in an LRU bounded by count, age and an estimate of their bytes; each profile is built
 * (collected, masked) only when it is read, so a unit profiled but never looked at costs
 * only its recording. Reads use `peek`, so the order is the order of keeping and the oldest is
 * the one evicted.
 */
export class MemoryProfileStorage implements RecordingKeeper {
  readonly kind = 'memory'
  private readonly cache: LRUCache<string, Entry>
  private readonly tokens = new LocalTokens((token) => this.cache.has(token))
  private builder: RecordingBuilder | undefined
  private readonly maxAgeMs: number
  private readonly maxBytes: number

  /** `clock`: what ages the profiles (default the system clock) */
  constructor (limits: { maxProfiles: number, maxAgeMs: number, maxBytes: number }, private readonly clock: Clock = systemClock) {
    this.maxAgeMs = limits.maxAgeMs
    this.maxBytes = limits.maxBytes
    // the TTL counts from the save and frees the memory; a profile's age counts from its `time` (expired())
    this.cache = new LRUCache<string, Entry>({
      max: limits.maxProfiles,
      ttl: limits.maxAgeMs,
      maxSize: limits.maxBytes,
      sizeCalculation: (entry) => entry.size,
      updateAgeOnGet: false,
      updateAgeOnHas: false,
      ...lruCacheClock(clock)
    })
  }

  get size (): number {
    return this.cache.size
  }

  useBuilder (builder: RecordingBuilder): void {
    this.builder = builder
  }

  reserveToken (): string {
    return this.tokens.reserve()
  }

  releaseToken (token: string): void {
    this.tokens.release(token)
  }

  keep (recording: Recording): void {
    // every byte it holds is counted; one holding more than a quarter of the budget is cut first
    // (marked), so that it is kept, and does not push out every other; one still larger than the
    // whole budget is not kept (lru-cache refuses it)
    let size = recordingSize(recording)
    if (size > this.maxBytes / 4) size = shrinkRecording(recording)
    this.cache.set(recording.token, { recording, profile: undefined, summary: undefined, figured: undefined, size })
  }

  /** Keeps the profile itself: the caller hands it over and does not change it afterwards. */
  async save (profile: Profile): Promise<void> {
    this.cache.set(profile.token, { recording: undefined, profile, summary: summarize(profile), figured: undefined, size: Math.max(1, jsonSizeBound(profile)) })
  }

  /** Older than maxAge by its `time` (its unit's start), as the other storages count it (the TTL counts from the keeping, a little later). */
  private expired (entry: Entry, now = this.clock.now()): boolean {
    const time = entry.recording?.context.startedAtEpoch ?? entry.summary?.time ?? 0
    return now - time > this.maxAgeMs
  }

  async load (token: string): Promise<Profile | undefined> {
    const entry = this.cache.peek(token)
    if (entry === undefined || this.expired(entry)) return undefined
    if (entry.recording !== undefined && this.builder !== undefined) return this.builder.profile(entry.recording)
    // a copy, as JSON would give it: a page may annotate what it reads
    return entry.profile === undefined ? undefined : upgradeSummary(JSON.parse(JSON.stringify(entry.profile)) as Profile)
  }

  async find (filter: ProfileFilter = {}): Promise<ProfileSummary[]> {
    // the most recently kept first: profiles of the same millisecond stay newest first (the sort is stable)
    const now = this.clock.now()
    // a recording's figures (its panels': statements, likely N+1…) and flags are those of its
    // built profile: built only when a filter needs them, and for the summaries given (the search page shows them)
    const figures = (filter.figures !== undefined && filter.figures.length > 0) || (filter.flags !== undefined && filter.flags.length > 0) || filter.issues === true
    const summaries: ProfileSummary[] = []
    const entries = new Map<ProfileSummary, Entry>()
    for (const entry of this.cache.values()) {
      if (this.expired(entry, now)) continue
      const summary = figures ? this.figuredOf(entry) : entry.summary ?? this.summaryOf(entry)
      if (summary === undefined) continue
      summaries.push(summary)
      entries.set(summary, entry)
    }
    return selectSummaries(summaries, filter).map((summary) => this.figuredOf(entries.get(summary)!) ?? summary)
  }

  private summaryOf (entry: Entry): ProfileSummary | undefined {
    if (entry.recording === undefined || this.builder === undefined) return undefined
    return (entry.summary = this.builder.summary(entry.recording))
  }

  /** The summary with its figures: a recording's from its profile, built now (once); a saved profile's as saved. */
  private figuredOf (entry: Entry): ProfileSummary | undefined {
    if (entry.recording === undefined || this.builder === undefined) return entry.summary
    return (entry.figured ??= summarize(this.builder.profile(entry.recording)))
  }

  async purge (): Promise<void> {
    this.cache.clear()
  }

  async close (): Promise<void> {}
}
