import type { Profile, ProfileFigures, ProfileSummary } from '../profile.js'
import type { Recording } from '../recording.js'
import { randomInt } from 'node:crypto'
import { isBrowserOwnRequest } from '../browser-requests.js'
import { hasFlag } from '../flags.js'

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
  /**
   * an exact status (`404`, a unit's exit code `0` or `1`), a class (`4xx`), or an outcome:
   * `failed` (a job or command that failed, a request answered 5xx), `ok` (a unit that
   * completed, a request answered 1xx to 3xx); in any case
   */
  status?: string
  /** a substring of the URL */
  url?: string
  /** a substring of the client IP */
  ip?: string
  /** epoch milliseconds, inclusive */
  start?: number
  /** epoch milliseconds, inclusive */
  end?: number
  /** the unit took this long or longer (ms) */
  minDuration?: number
  /**
   * the panels' figures (`ProfileSummary.figures`), each given must match: a number figure at
   * least `min`, a flag true (`{ panel: 'db', figure: 'statements', min: 3 }`; `{ figure:
   * 'nPlusOne' }`: any panel's). Profiles that do not say (older ones, or their panel was off)
   * never match
   */
  figures?: FigureFilter[]
  /** the profile has every one of these flags (`exception`, `error_logs`… : `PROFILE_FLAGS`) */
  flags?: string[]
  /** the profile has at least one flag, or a 5xx status: what is worth a look (Laravel Debugbar's `find --issues`) */
  issues?: boolean
  /** pages only: the browser's own requests (favicon, source maps, static assets) left out */
  pages?: boolean
  /** most summaries given, the newest; default 50 */
  limit?: number
}

/** One filter on the panels' figures (see ProfileFilter.figures). */
export interface FigureFilter {
  /** the collector whose figure it is; absent: any panel's */
  panel?: string
  /** the figure's name (`statements`, `nPlusOne`) */
  figure: string
  /** for a number figure: at least this (default 1); a flag must be true */
  min?: number
}

/** Whether a summary's figures match one figure filter. */
export function matchesFigure (figures: ProfileFigures | undefined, wanted: FigureFilter): boolean {
  if (figures === undefined) return false
  const panels = wanted.panel === undefined ? Object.values(figures) : [figures[wanted.panel]]
  return panels.some((panel) => {
    const value = panel?.[wanted.figure]
    return typeof value === 'number' ? value >= (wanted.min ?? 1) : value === true
  })
}

/**
 * Where profiles live: the kernel's memory, file and Redis storages, or an app's own
 * (`profiler.storage`). The contract, which `fastify-kernel/testing` runs as tests
 * (docs/profiler.md, "Storage"): bounded by count (`maxProfiles`, the oldest go first) and by
 * age (`maxAge` after a profile's `time`, on the storage's clock).
 *
 * Tokens are handed out by the storage, because only it can promise that a token is unique
 * where it matters: among this process's profiles (memory) or among every process sharing it
 * (file: each writer's tokens begin with its slot; Redis: set-if-absent). `reserveToken` is
 * synchronous — the draw runs at the start of every profiled request — so a shared storage
 * reserves ahead.
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
 * A storage that keeps recordings as they ended and builds their profiles only when they are
 * read (the memory storage): a unit profiled but never looked at costs only its recording. What
 * it keeps never leaves the process; a storage that writes elsewhere (a folder, Redis) is given
 * profiles built and masked (`save`).
 */
export interface RecordingKeeper extends ProfileStorage {
  /** how its recordings become profiles (and summaries): the profiler's, given once */
  useBuilder (builder: RecordingBuilder): void
  keep (recording: Recording): void
}

/** Builds what is read of a kept recording: its masked profile, its summary. */
export interface RecordingBuilder {
  profile (recording: Recording): Profile
  summary (recording: Recording): ProfileSummary
}

export function keepsRecordings (storage: ProfileStorage): storage is RecordingKeeper {
  return typeof (storage as Partial<RecordingKeeper>).keep === 'function' && typeof (storage as Partial<RecordingKeeper>).useBuilder === 'function'
}

/**
 * Token reservations of a storage only one process writes (memory): unique by construction. A
 * sequence over the 16.7 million six-hex tokens, from a random start, so that a token is given
 * once in 16.7 million draws, more than any storage keeps (`maxProfiles` is at most a million)
 * and than any request stays in flight; a token `stored` says is taken is skipped.
 */
export class LocalTokens {
  private next = randomInt(TOKENS)

  constructor (private readonly stored: (token: string) => boolean) {}

  reserve (): string {
    for (let tries = 0; ; tries++) {
      const n = this.next
      this.next = (n + 1) % TOKENS
      const token = HEX[n >>> 16]! + HEX[(n >>> 8) & 255]! + HEX[n & 255]!
      // bounded: a storage keeps at most a million profiles
      if (!this.stored(token) || tries > TOKENS) return token
    }
  }

  /** A sequence holds no reservation to end. */
  release (_token: string): void {}
}

const TOKENS = 0x1000000
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))

/** A unit's outcome: a job's or command's exit code (0: ok), a request's status class (5xx: failed; 4xx and aborted: neither). */
export function outcomeOf (summary: Pick<ProfileSummary, 'kind' | 'statusCode'>): 'ok' | 'failed' | undefined {
  if (summary.kind !== undefined && summary.kind !== 'request') return summary.statusCode === 0 ? 'ok' : 'failed'
  if (summary.statusCode >= 500) return 'failed'
  return summary.statusCode >= 100 && summary.statusCode < 400 ? 'ok' : undefined
}

export function matchesFilter (summary: ProfileSummary, filter: ProfileFilter): boolean {
  if (filter.kind !== undefined && (summary.kind ?? 'request') !== filter.kind) return false
  if (filter.name !== undefined && !(summary.name ?? '').includes(filter.name)) return false
  if (filter.parent !== undefined && summary.parent !== filter.parent) return false
  if (filter.method !== undefined && summary.method !== filter.method.toUpperCase()) return false
  if (filter.status !== undefined) {
    const status = String(summary.statusCode)
    const wanted = filter.status.toLowerCase()
    if (wanted === 'failed' || wanted === 'ok') {
      if (outcomeOf(summary) !== wanted) return false
    } else if (/^[1-5]xx$/.test(wanted) ? status[0] !== wanted[0] : status !== wanted) return false
  }
  if (filter.url !== undefined && !summary.url.includes(filter.url)) return false
  if (filter.ip !== undefined && !summary.ip.includes(filter.ip)) return false
  if (filter.start !== undefined && summary.time < filter.start) return false
  if (filter.end !== undefined && summary.time > filter.end) return false
  if (filter.minDuration !== undefined && !(summary.duration >= filter.minDuration)) return false
  if (filter.figures !== undefined && !filter.figures.every((wanted) => matchesFigure(summary.figures, wanted))) return false
  if (filter.flags !== undefined && !filter.flags.every((flag) => hasFlag(summary, flag))) return false
  if (filter.issues === true && !(summary.statusCode >= 500 || (Array.isArray(summary.flags) && summary.flags.length > 0) || hasFlag(summary, 'n_plus_one'))) return false
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
