import type { Profile, ProfileSummary } from '../profile.js'

/** Filters of the search page; every one optional. */
export interface ProfileFilter {
  method?: string
  /** an exact status (`404`) or a class (`4xx`) */
  status?: string
  /** a substring of the URL */
  url?: string
  /** a substring of the client IP */
  ip?: string
  /** epoch milliseconds, inclusive */
  start?: number
  end?: number
  /** default 50 */
  limit?: number
}

/**
 * Where profiles live. `has` is synchronous (the token draw asks it for every request): an
 * implementation keeps its index in memory. Bounded by count and age, the oldest purged first.
 */
export interface ProfileStorage {
  readonly kind: string
  has (token: string): boolean
  save (profile: Profile): Promise<void>
  /** undefined for an unknown, expired or unreadable profile: never throws for a bad token */
  load (token: string): Promise<Profile | undefined>
  /** summaries matching the filter, newest first */
  find (filter?: ProfileFilter): Promise<ProfileSummary[]>
  /** removes every profile */
  purge (): Promise<void>
  /** how many profiles are kept now */
  readonly size: number
  close (): Promise<void>
}

export function matchesFilter (summary: ProfileSummary, filter: ProfileFilter): boolean {
  if (filter.method !== undefined && summary.method !== filter.method.toUpperCase()) return false
  if (filter.status !== undefined) {
    const status = String(summary.statusCode)
    const wanted = filter.status.toLowerCase()
    if (/^[1-5]xx$/.test(wanted) ? status[0] !== wanted[0] : status !== wanted) return false
  }
  if (filter.url !== undefined && !summary.url.includes(filter.url)) return false
  if (filter.ip !== undefined && !summary.ip.includes(filter.ip)) return false
  if (filter.start !== undefined && summary.time < filter.start) return false
  if (filter.end !== undefined && summary.time > filter.end) return false
  return true
}

/** Newest first, filtered, at most `limit`. */
export function selectSummaries (summaries: Iterable<ProfileSummary>, filter: ProfileFilter = {}): ProfileSummary[] {
  const limit = filter.limit ?? 50
  const out: ProfileSummary[] = []
  for (const summary of summaries) if (matchesFilter(summary, filter)) out.push(summary)
  out.sort((a, b) => b.time - a.time)
  return out.slice(0, limit)
}
