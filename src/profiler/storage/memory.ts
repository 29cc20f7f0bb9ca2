import { LRUCache } from 'lru-cache'
import type { Clock } from '../../clock.js'
import { lruCacheClock, systemClock } from '../../clock.js'
import type { Profile, ProfileSummary } from '../profile.js'
import { summarize } from '../profile.js'
import type { ProfileFilter, ProfileStorage } from './storage.js'
import { LocalTokens, selectSummaries } from './storage.js'

interface Entry {
  summary: ProfileSummary
  /** stored serialised: a profile read back is a copy, and its size is known */
  json: string
}

/**
 * Profiles in memory (tests, embedded use): an LRU bounded by count, age and bytes. Reads use
 * `peek`, so the order is the order of saving and the oldest profile is the one evicted.
 */
export class MemoryProfileStorage implements ProfileStorage {
  readonly kind = 'memory'
  private readonly cache: LRUCache<string, Entry>
  private readonly tokens = new LocalTokens((token) => this.cache.has(token))

  /** `clock`: what ages the profiles (default the system clock) */
  constructor (limits: { maxProfiles: number, maxAgeMs: number, maxBytes: number }, clock: Clock = systemClock) {
    this.cache = new LRUCache<string, Entry>({
      max: limits.maxProfiles,
      ttl: limits.maxAgeMs,
      maxSize: limits.maxBytes,
      sizeCalculation: (entry) => Math.max(1, entry.json.length),
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

  async save (profile: Profile): Promise<void> {
    const json = JSON.stringify(profile)
    // a single profile larger than the whole budget is not kept (lru-cache would refuse it)
    this.cache.set(profile.token, { summary: summarize(profile), json })
  }

  async load (token: string): Promise<Profile | undefined> {
    const entry = this.cache.peek(token)
    return entry === undefined ? undefined : JSON.parse(entry.json) as Profile
  }

  async find (filter: ProfileFilter = {}): Promise<ProfileSummary[]> {
    // the most recently saved first: profiles of the same millisecond stay newest first (the sort is stable)
    const summaries: ProfileSummary[] = []
    for (const entry of this.cache.values()) summaries.push(entry.summary)
    return selectSummaries(summaries, filter)
  }

  async purge (): Promise<void> {
    this.cache.clear()
  }

  async close (): Promise<void> {}
}
