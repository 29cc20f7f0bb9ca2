import type { Profile, ProfileSummary } from '../profile.js'
import { createToken } from '../token.js'
import { isBrowserOwnRequest } from '../browser-requests.js'

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
  /** the request took this long or longer (ms) */
  minDuration?: number
  /** the app ran this many SQL statements or more (profiles that do not say, older ones, never match) */
  minStatements?: number
  /** a panel flagged a likely N+1 (database, cache, HTTP client) */
  nPlusOne?: boolean
  /** pages only: the browser's own requests (favicon, source maps, static assets) left out */
  pages?: boolean
  /** default 50 */
  limit?: number
}

/** Whether a filter needs more of a summary than its time (a shared storage then reads the whole index). */
export function filtersBeyondTime (filter: ProfileFilter): boolean {
  return filter.method !== undefined || filter.status !== undefined || filter.url !== undefined || filter.ip !== undefined ||
    filter.minDuration !== undefined || filter.minStatements !== undefined || filter.nPlusOne === true || filter.pages === true
}

/**
 * Where profiles live. Bounded by count and age, the oldest purged first.
 *
 * Tokens are handed out by the storage, because only it can promise that a token is unique
 * where it matters: among this process's profiles (memory, file) or among every process
 * sharing it (Redis, where set-if-absent does it). `reserveToken` is synchronous — the draw
 * runs at the start of every profiled request — so a shared storage reserves batches ahead.
 */
export interface ProfileStorage {
  readonly kind: string
  /**
   * A token no stored profile and no other reservation has; undefined when the storage cannot
   * promise one now (a shared store unreachable): the request is then not profiled.
   */
  reserveToken (): string | undefined
  /** Ends a reservation: after its profile was saved, or when it will never be. */
  releaseToken (token: string): void
  /** stores the profile under its reserved token; rejects when it cannot (the profile is lost) */
  save (profile: Profile): Promise<void>
  /** undefined for an unknown, expired or unreadable profile: never throws for a bad token */
  load (token: string): Promise<Profile | undefined>
  /** summaries matching the filter, newest first */
  find (filter?: ProfileFilter): Promise<ProfileSummary[]>
  /** removes every profile */
  purge (): Promise<void>
  /** how many profiles are kept now (a shared storage: as last seen) */
  readonly size: number
  close (): Promise<void>
}

/**
 * Token reservations of a storage only one process writes (memory, file): a token is free when
 * no stored profile has it and no request in flight was given it.
 */
export class LocalTokens {
  private readonly reserved = new Set<string>()

  constructor (private readonly stored: (token: string) => boolean) {}

  reserve (): string {
    const token = createToken((candidate) => this.reserved.has(candidate) || this.stored(candidate))
    // a request that never terminates (a hijacked reply) must not grow this set without bound
    if (this.reserved.size >= 10_000) this.reserved.clear()
    this.reserved.add(token)
    return token
  }

  release (token: string): void {
    this.reserved.delete(token)
  }
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
  if (filter.minDuration !== undefined && !(summary.duration >= filter.minDuration)) return false
  if (filter.minStatements !== undefined && !(typeof summary.statements === 'number' && summary.statements >= filter.minStatements)) return false
  if (filter.nPlusOne === true && !(Array.isArray(summary.nPlusOne) && summary.nPlusOne.length > 0)) return false
  if (filter.pages === true && isBrowserOwnRequest(summary.url)) return false
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
