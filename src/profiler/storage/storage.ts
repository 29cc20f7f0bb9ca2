import type { Profile, ProfileSummary } from '../profile.js'
import { createToken } from '../token.js'

/** Filters of the search page and of `find()`; every one optional, all of them given must match. */
export interface ProfileFilter {
  /** the kind of unit: `request`, `job`, `command`… (a profile without one is a `request`) */
  kind?: string
  /** a substring of a unit's name */
  name?: string
  /** the units recorded as part of this profile: the exact token of their parent */
  parent?: string
  /** the method, in any case (a unit's is its kind upper-cased: `JOB`) */
  method?: string
  /** an exact status (`404`, a unit's exit code `0` or `1`) or a class (`4xx`), in any case */
  status?: string
  /** a substring of the URL */
  url?: string
  /** a substring of the client IP */
  ip?: string
  /** epoch milliseconds, inclusive */
  start?: number
  /** epoch milliseconds, inclusive */
  end?: number
  /** most summaries given, the newest; default 50 */
  limit?: number
}

/**
 * Where profiles live: the kernel's memory, file and Redis storages, or an app's own
 * (`profiler.storage`). The contract, which `fastify-kernel/testing` runs as tests
 * (docs/profiler.md, "Storage"): bounded by count (`maxProfiles`, the oldest go first) and by
 * age (`maxAge` after a profile's `time`, on the storage's clock).
 *
 * Tokens are handed out by the storage, because only it can promise that a token is unique
 * where it matters: among this process's profiles (memory, file) or among every process
 * sharing it (Redis, where set-if-absent does it). `reserveToken` is synchronous — the draw
 * runs at the start of every profiled request — so a shared storage reserves batches ahead.
 */
export interface ProfileStorage {
  /** a short lower-case name (`memory`, `file`, `redis`, `sqlite`…), as pages and logs name it */
  readonly kind: string
  /**
   * Six lower-case hex characters that no stored profile has and no other reservation holds;
   * undefined when the storage cannot promise one now (a shared store unreachable): the unit is
   * then not profiled.
   */
  reserveToken (): string | undefined
  /** Ends a reservation: after its profile was saved, or when it will never be. Never throws. */
  releaseToken (token: string): void
  /**
   * Stores the profile under its reserved token (the caller hands it over and does not change it
   * afterwards); once resolved, `load` and `find` see it. Rejects when it cannot (the profile is lost).
   */
  save (profile: Profile): Promise<void>
  /**
   * The profile as JSON gives it back, a copy of its own; undefined for an unknown, reserved but
   * unsaved, expired or purged profile and for any string that is no token: never throws for a bad token
   */
  load (token: string): Promise<Profile | undefined>
  /** summaries (not whole profiles) matching every filter given, newest first by `time`, at most `limit` */
  find (filter?: ProfileFilter): Promise<ProfileSummary[]>
  /** removes every profile; the storage works on */
  purge (): Promise<void>
  /** how many profiles are kept now (a shared storage: as last seen) */
  readonly size: number
  /** resolves once every save it accepted has settled; the storage is not used afterwards */
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
  if (filter.kind !== undefined && (summary.kind ?? 'request') !== filter.kind) return false
  if (filter.name !== undefined && !(summary.name ?? '').includes(filter.name)) return false
  if (filter.parent !== undefined && summary.parent !== filter.parent) return false
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
