import { randomBytes } from 'node:crypto'
import type { Clock, Profile, ProfileFilter, ProfileStorage, ProfileSummary } from '../../index.js'

/**
 * A profile storage as an app would write its own (docs/profiler.md, "Storage"): a Map, from the
 * package's public types alone. It keeps what it was asked in `calls`, for the tests to read.
 */
export class MapStorage implements ProfileStorage {
  readonly kind = 'map'
  readonly calls: string[] = []
  /** in the order of saving: the first is the oldest */
  private readonly profiles = new Map<string, { summary: ProfileSummary, json: string }>()
  private readonly reserved = new Set<string>()

  constructor (private readonly settings: { maxProfiles: number, maxAgeMs: number, clock: Clock }) {}

  get size (): number {
    return this.profiles.size
  }

  reserveToken (): string {
    for (;;) {
      const token = randomBytes(3).toString('hex')
      if (this.profiles.has(token) || this.reserved.has(token)) continue
      this.reserved.add(token)
      return token
    }
  }

  releaseToken (token: string): void {
    this.reserved.delete(token)
  }

  async save (profile: Profile): Promise<void> {
    this.calls.push(`save ${profile.token}`)
    const { token, kind, name, parent, method, url, statusCode, ip, time, duration } = profile
    this.profiles.delete(token)
    this.profiles.set(token, { summary: { token, kind, name, parent, method, url, statusCode, ip, time, duration }, json: JSON.stringify(profile) })
    for (const oldest of this.profiles.keys()) {
      if (this.profiles.size <= this.settings.maxProfiles) break
      this.profiles.delete(oldest)
    }
  }

  private live (summary: ProfileSummary): boolean {
    return this.settings.clock.now() - summary.time <= this.settings.maxAgeMs
  }

  async load (token: string): Promise<Profile | undefined> {
    const entry = this.profiles.get(token)
    return entry === undefined || !this.live(entry.summary) ? undefined : JSON.parse(entry.json) as Profile
  }

  async find (filter: ProfileFilter = {}): Promise<ProfileSummary[]> {
    const status = filter.status?.toLowerCase()
    const matches = (s: ProfileSummary): boolean => this.live(s) &&
      (filter.kind === undefined || (s.kind ?? 'request') === filter.kind) &&
      (filter.name === undefined || (s.name ?? '').includes(filter.name)) &&
      (filter.parent === undefined || s.parent === filter.parent) &&
      (filter.method === undefined || s.method === filter.method.toUpperCase()) &&
      (status === undefined || (/^[1-5]xx$/.test(status) ? String(s.statusCode)[0] === status[0] : String(s.statusCode) === status)) &&
      (filter.url === undefined || s.url.includes(filter.url)) &&
      (filter.ip === undefined || s.ip.includes(filter.ip)) &&
      (filter.start === undefined || s.time >= filter.start) &&
      (filter.end === undefined || s.time <= filter.end)
    return [...this.profiles.values()].map((entry) => entry.summary).filter(matches).sort((a, b) => b.time - a.time).slice(0, filter.limit ?? 50)
  }

  async purge (): Promise<void> {
    this.profiles.clear()
  }

  async close (): Promise<void> {
    this.calls.push('close')
  }
}
