import { LRUCache } from 'lru-cache'
import type { Clock } from '../../clock.js'
import { lruCacheClock, systemClock } from '../../clock.js'
import type { Profile, ProfileSummary } from '../profile.js'
import { summarize } from '../profile.js'
import type { ProfileFilter, ProfileStorage } from './storage.js'
import { LocalTokens, selectSummaries } from './storage.js'
import { jsonSizeBound } from './json-size.js'

interface Entry {
  summary: ProfileSummary
  /**
   * kept as built, not serialised: serialising every profile took most of the profiler's cost
   * per request at full capture, and a profile in memory is read back far less often than it
   * is saved (a page view copies it then)
   */
  profile: Profile
  /** at least its serialised length: what `maxBytes` counts */
  size: number
}

/**
 * Profiles in memory (tests, embedded use): an LRU bounded by count, age and bytes. Reads use
 * `peek`, so the order is the order of saving and the oldest profile is the one evicted.
 */
export class MemoryProfileStorage implements ProfileStorage {
  readonly kind = 'memory'
  private readonly cache: LRUCache<string, Entry>
  private readonly tokens = new LocalTokens((token) => this.cache.has(token))
  private readonly maxAgeMs: number

  /** `clock`: what ages the profiles (default the system clock) */
  constructor (limits: { maxProfiles: number, maxAgeMs: number, maxBytes: number }, private readonly clock: Clock = systemClock) {
    this.maxAgeMs = limits.maxAgeMs
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

  reserveToken (): string {
    return this.tokens.reserve()
  }

  releaseToken (token: string): void {
    this.tokens.release(token)
  }

  /** Keeps the profile itself: the caller hands it over and does not change it afterwards (the profiler builds a new one per request). */
  async save (profile: Profile): Promise<void> {
    // a single profile larger than the whole budget is not kept (lru-cache would refuse it)
    this.cache.set(profile.token, { summary: summarize(profile), profile, size: Math.max(1, jsonSizeBound(profile)) })
  }

  /** Older than maxAge by its `time`, as the other storages count it (the TTL counts from the save, a little later). */
  private expired (summary: ProfileSummary, now = this.clock.now()): boolean {
    return now - summary.time > this.maxAgeMs
  }

  async load (token: string): Promise<Profile | undefined> {
    const entry = this.cache.peek(token)
    if (entry === undefined || this.expired(entry.summary)) return undefined
    // a copy, as JSON would give it: a page may annotate what it reads
    return JSON.parse(JSON.stringify(entry.profile)) as Profile
  }

  async find (filter: ProfileFilter = {}): Promise<ProfileSummary[]> {
    // the most recently saved first: profiles of the same millisecond stay newest first (the sort is stable)
    const now = this.clock.now()
    const summaries: ProfileSummary[] = []
    for (const entry of this.cache.values()) if (!this.expired(entry.summary, now)) summaries.push(entry.summary)
    return selectSummaries(summaries, filter)
  }

  async purge (): Promise<void> {
    this.cache.clear()
  }

  async close (): Promise<void> {}
}
