import type { Clock } from '../../clock.js'
import { systemClock } from '../../clock.js'
import type { Profile, ProfileSummary } from '../profile.js'
import { summarize } from '../profile.js'
import type { Recording } from '../recording.js'
import type { ProfileFilter, RecordingBuilder, RecordingKeeper } from './storage.js'
import { LocalTokens, selectSummaries } from './storage.js'
import { jsonSizeBound } from './json-size.js'

/** A recording kept as it ended (built on read), or a profile saved as built (`save`). */
interface Entry {
  recording: Recording | undefined
  profile: Profile | undefined
  /** made once, when first listed */
  summary: ProfileSummary | undefined
  /** the summary with the figures only a built profile tells (statements, likely N+1): made once, when first asked */
  figured: ProfileSummary | undefined
  /** an estimate of what it holds, in bytes: what `maxBytes` counts */
  size: number
  /** when it was kept, by the clock: what frees its memory once older than maxAge */
  keptAt: number
}

/** Bytes a recording is counted for: a fixed part, and what grows with the request (its headers, body, spans, logs). */
export function recordingSize (recording: Recording): number {
  let size = 2048 + recording.spans.spans.length * 512 + (recording.logs?.calls.length ?? 0) * 256 + recording.retainedBytes
  const request = recording.request
  if (request !== undefined) {
    const raw = request.rawHeaders
    for (let i = 0; i < raw.length; i++) size += raw[i]!.length
    const length = Number(request.headers['content-length'])
    if (length > 0) size += length
  }
  return size
}

/**
 * Profiles in memory (the plugin's default): the recordings themselves, kept as their units
 * ended, in the order of keeping, bounded by count, age and an estimate of their bytes (the
 * oldest leave first); each profile is built (collected, masked) only when it is read, so a
 * request profiled but never looked at costs only its recording and a place in a Map.
 */
export class MemoryProfileStorage implements RecordingKeeper {
  readonly kind = 'memory'
  /** oldest first: a Map iterates in the order of insertion */
  private readonly entries = new Map<string, Entry>()
  private bytes = 0
  private readonly tokens = new LocalTokens((token) => this.entries.has(token))
  private builder: RecordingBuilder | undefined
  private readonly maxProfiles: number
  private readonly maxAgeMs: number
  private readonly maxBytes: number

  /** `clock`: what ages the profiles (default the system clock) */
  constructor (limits: { maxProfiles: number, maxAgeMs: number, maxBytes: number }, private readonly clock: Clock = systemClock) {
    this.maxProfiles = limits.maxProfiles
    this.maxAgeMs = limits.maxAgeMs
    this.maxBytes = limits.maxBytes
  }

  get size (): number {
    this.dropExpired(this.clock.now())
    return this.entries.size
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
    this.add(recording.token, { recording, profile: undefined, summary: undefined, figured: undefined, size: recordingSize(recording), keptAt: 0 })
  }

  /** Keeps the profile itself: the caller hands it over and does not change it afterwards. */
  async save (profile: Profile): Promise<void> {
    this.add(profile.token, { recording: undefined, profile, summary: summarize(profile), figured: undefined, size: Math.max(1, jsonSizeBound(profile)), keptAt: 0 })
  }

  /** The newest entry; then the oldest leave while a bound is passed. A single entry larger than the whole budget is not kept. */
  private add (token: string, entry: Entry): void {
    this.remove(token)
    if (entry.size > this.maxBytes) return
    entry.keptAt = this.clock.now()
    this.entries.set(token, entry)
    this.bytes += entry.size
    this.dropExpired(entry.keptAt)
    if (this.entries.size <= this.maxProfiles && this.bytes <= this.maxBytes) return
    for (const [oldest, kept] of this.entries) {
      if (this.entries.size <= this.maxProfiles && this.bytes <= this.maxBytes) break
      this.entries.delete(oldest)
      this.bytes -= kept.size
    }
  }

  private remove (token: string): void {
    const entry = this.entries.get(token)
    if (entry === undefined) return
    this.entries.delete(token)
    this.bytes -= entry.size
  }

  /** Frees the entries kept more than maxAge ago: the oldest first, so it stops at the first younger one. */
  private dropExpired (now: number): void {
    for (const [token, entry] of this.entries) {
      if (now - entry.keptAt <= this.maxAgeMs) break
      this.entries.delete(token)
      this.bytes -= entry.size
    }
  }

  /** Older than maxAge by its `time` (its unit's start), as the other storages count it (the TTL counts from the keeping, a little later). */
  private expired (entry: Entry, now = this.clock.now()): boolean {
    const time = entry.recording?.context.startedAtEpoch ?? entry.summary?.time ?? 0
    return now - time > this.maxAgeMs
  }

  async load (token: string): Promise<Profile | undefined> {
    const entry = this.entries.get(token)
    if (entry === undefined || this.expired(entry)) return undefined
    if (entry.recording !== undefined && this.builder !== undefined) return this.builder.profile(entry.recording)
    // a copy, as JSON would give it: a page may annotate what it reads
    return entry.profile === undefined ? undefined : JSON.parse(JSON.stringify(entry.profile)) as Profile
  }

  async find (filter: ProfileFilter = {}): Promise<ProfileSummary[]> {
    // the most recently kept first: profiles of the same millisecond stay newest first (the sort is stable)
    const now = this.clock.now()
    // a recording's figures (statements, likely N+1) are those of its built profile: built only
    // when a filter needs them, and for the summaries given (the search page shows them)
    const figures = filter.minStatements !== undefined || filter.nPlusOne === true
    const summaries: ProfileSummary[] = []
    const entries = new Map<ProfileSummary, Entry>()
    const kept = [...this.entries.values()]
    for (let i = kept.length - 1; i >= 0; i--) {
      const entry = kept[i]!
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
    this.entries.clear()
    this.bytes = 0
  }

  async close (): Promise<void> {}
}
