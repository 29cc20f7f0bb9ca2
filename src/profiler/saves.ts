import type { Profile } from './profile.js'
import type { ProfileStorage } from './storage/storage.js'
import { keepsRecordings } from './storage/storage.js'
import type { RecordingKeeper } from './storage/storage.js'
import type { Recording } from './recording.js'
import { ThrottledWarning } from '../log/throttled-warning.js'
/** where the profiler warns (the app's logger) */
export interface ProfilerLogger {
  warn: (fields: object, message: string) => void
}

/**
 * Saves waiting for the storage beyond this (and beyond the storage's own bound: a storage
 * forgets the oldest profiles past `maxProfiles`, written or not) are dropped: a slow disk never
 * grows the heap.
 */
const MAX_PENDING_SAVES = 256
/**
 * Building and serialising profiles may take at most `saveBudget` of the main thread, measured
 * over windows of this length: a second, so that a burst (a page loading its assets) is not
 * mistaken for a load test. Under a load test the profiler keeps what fits and drops the rest
 * (counted), instead of slowing the app.
 */
const SAVE_WINDOW_MS = 1000

/**
 * Why units were not profiled, counted apart: the search page says which, with its count, rather
 * than blaming load for a storage that failed.
 */
export interface Drops {
  /** the save budget of a second was spent (heavy load): the unit was not recorded */
  budget: number
  /** the storage was behind (saves waiting beyond its bound): the unit was not recorded */
  backlog: number
  /** the storage could not promise a unique token (a shared store unreachable or slow to answer): the unit was not recorded */
  token: number
  /** the storage refused or failed the save: the unit was recorded, its profile lost */
  failed: number
  /** the last failure's message */
  lastFailure?: string
}

export interface SaveLimits {
  maxProfiles: number
  /** the share of the main thread building and serialising profiles may take (1: no limit) */
  saveBudget: number
  /** profiles always kept each second, whatever the budget */
  keepPerSecond: number
}

/**
 * From a recording that ended to a stored profile: the token each recording is given; a storage
 * that keeps recordings as they are (memory) keeps it at once, and builds its profile when it is
 * read; any other storage gets its profile built and saved on the turn after the unit ended (one
 * immediate for every unit that ended in a turn), within the save budget. Counts what was stored
 * and dropped.
 */
export class ProfileSaves {
  /** recordings ended in this turn of the event loop, saved (or dropped) on the next */
  private endedNow: Recording[] = []

  private readonly saveEnded = (): void => {
    const batch = this.endedNow
    this.endedNow = []
    // the saves still waiting from earlier turns: a burst that ends in one turn is not a backlog
    const backlog = this.pendingSaves
    for (const recording of batch) this.saveOrDrop(recording, backlog)
  }

  /** tokens of this process's recordings whose profile is not stored (nor dropped) yet */
  private readonly unsaved = new Set<string>()
  /** what waits for a token's profile to be stored (or dropped) */
  private readonly waiting = new Map<string, Array<() => void>>()
  /** saves waiting for the storage */
  private pendingSaves = 0
  /** recordings ended whose profile is not built yet (or whose end is still being completed) */
  private scheduled = 0
  /** profiles not stored, by reason (`dropped` is their sum) */
  readonly drops: Drops = { budget: 0, backlog: 0, token: 0, failed: 0 }
  /** profiles stored: with `dropped`, every unit profiled is counted once (the bench checks nothing is lost) */
  saved = 0
  private readonly maxPendingSaves: number
  /** the storage keeps recordings as they ended (memory): nothing to build nor wait for */
  private readonly keeps: boolean
  private readonly saveFailure: ThrottledWarning
  private windowStart = 0
  private windowSpent = 0
  private windowSaves = 0
  /** units past `keepPerSecond` in their second (memory storage): every `unitsPerRecorded`-th is recorded */
  private pastRate = 0
  /** 1 / saveBudget, a whole number: 20 by default */
  private readonly unitsPerRecorded: number

  /** @param build the profile of a recording that ended (synchronous: what the main thread pays, counted against the budget) */
  constructor (
    private readonly storage: ProfileStorage,
    private readonly limits: SaveLimits,
    private readonly build: (recording: Recording) => Profile,
    log: ProfilerLogger
  ) {
    this.maxPendingSaves = MAX_PENDING_SAVES + limits.maxProfiles
    this.unitsPerRecorded = Math.max(1, Math.round(1 / limits.saveBudget))
    this.keeps = keepsRecordings(storage)
    this.saveFailure = new ThrottledWarning(log, 'fastify-kernel: a profile could not be saved (at most one such warning per 10 s; every failure is counted in dropped)')
  }

  /**
   * A token for a unit that begins, or undefined when it will not be profiled: the save budget
   * of this window is spent or the storage is behind (then it costs the profiler nothing more),
   * or the storage cannot promise a unique token now (counted as dropped either way).
   * `pastBudget`: an exception's (`keepExceptions`), kept past the save budget (not past the
   * storage's backlog).
   */
  reserve (pastBudget = false): string | undefined {
    const saturation = pastBudget ? this.backlogged(this.pendingSaves) : this.saturation()
    if (saturation !== undefined) {
      this.drops[saturation]++
      return undefined
    }
    const token = this.storage.reserveToken()
    if (token === undefined) {
      this.drops.token++
      return undefined
    }
    // a unit that never ends (a hijacked reply) must not grow this set without bound
    if (this.unsaved.size >= 10_000) this.unsaved.clear()
    if (this.waiting.size >= 10_000) this.forgetWaiters()
    this.unsaved.add(token)
    return token
  }

  /** A recording's end is being completed (an extension's asynchronous end): `settled()` waits for it. */
  ending (): () => void {
    this.scheduled++
    return () => { this.scheduled-- }
  }

  /**
   * The unit ended: a storage that keeps recordings keeps it now; another gets its profile built
   * and saved on the next turn of the event loop.
   */
  ended (recording: Recording): void {
    if (this.keeps) {
      (this.storage as RecordingKeeper).keep(recording)
      this.saved++
      this.release(recording.token)
      return
    }
    this.scheduled++
    if (this.endedNow.push(recording) === 1) setImmediate(this.saveEnded)
  }

  /** A recording its capture mode does not keep: its token is given back, nothing is stored (nor counted as dropped). */
  discarded (recording: Recording): void {
    this.release(recording.token)
  }

  /** Resolves when every save scheduled so far has finished (tests, shutdown). */
  async settled (): Promise<void> {
    while (this.pendingSaves > 0 || this.scheduled > 0) await new Promise((resolve) => setTimeout(resolve, 2))
  }

  /** profiles not stored, whatever the reason */
  get dropped (): number {
    return this.drops.budget + this.drops.backlog + this.drops.token + this.drops.failed
  }

  /** Resolves once the profile of `token` is stored (or dropped), waiting at most `timeoutMs`. */
  async untilStored (token: string, timeoutMs = 2000): Promise<void> {
    if (!this.unsaved.has(token)) return
    let timer: NodeJS.Timeout | undefined
    await new Promise<void>((resolve) => {
      const waiters = this.waiting.get(token)
      if (waiters === undefined) this.waiting.set(token, [resolve])
      else waiters.push(resolve)
      timer = setTimeout(resolve, timeoutMs)
      timer.unref()
    })
    clearTimeout(timer)
  }

  /**
   * Whether the save budget of the current window is spent (or the storage is behind): then a
   * unit is not profiled at all. Under a load test most requests then cost the profiler
   * nothing, rather than being recorded for a profile that would be dropped (and carrying a
   * token whose profile never exists).
   */
  get saturated (): boolean {
    return this.saturation() !== undefined
  }

  /** Why a unit beginning now would not be profiled (the budget, the storage's backlog), if it would not. */
  private saturation (): 'budget' | 'backlog' | undefined {
    if (this.keeps) return this.pastKeepRate() ? 'budget' : undefined
    return this.saturatedWith(this.pendingSaves)
  }

  /**
   * A storage that keeps recordings as they are (memory) has no backlog and builds nothing as a
   * unit ends: what a recorded unit costs is spent while it runs. So the budget is a share of
   * units there: past the first `keepPerSecond` of a second, one unit in 1 / `saveBudget` is
   * recorded (1 in 20 by default), the others cost only the debug mode. A developer's browsing
   * is all recorded; a load test is sampled; `saveBudget: 1` records every unit.
   */
  private pastKeepRate (): boolean {
    if (this.limits.saveBudget >= 1) return false
    this.rollWindow()
    if (this.windowSaves < this.limits.keepPerSecond) {
      this.windowSaves++
      return false
    }
    this.pastRate++
    return this.pastRate % this.unitsPerRecorded !== 0
  }

  /** A new window (a second) starts its counts at zero once the last one has passed. */
  private rollWindow (): void {
    const now = performance.now()
    if (now - this.windowStart < SAVE_WINDOW_MS) return
    this.windowStart = now
    this.windowSpent = 0
    this.windowSaves = 0
  }

  /** An exception's recording (`keepExceptions`) goes past the budget, not past the backlog's bound. */
  private backlogged (pendingSaves: number): 'backlog' | undefined {
    return pendingSaves >= this.maxPendingSaves ? 'backlog' : undefined
  }

  private saturatedWith (pendingSaves: number): 'budget' | 'backlog' | undefined {
    this.rollWindow()
    const { saveBudget, keepPerSecond } = this.limits
    if (pendingSaves >= this.maxPendingSaves) return 'backlog'
    return saveBudget < 1 && this.windowSaves >= keepPerSecond && this.windowSpent >= saveBudget * SAVE_WINDOW_MS ? 'budget' : undefined
  }

  /**
   * Decided on the later tick, not when the unit ended: a burst of requests is not a backlog
   * unless the storage really is behind (the memory storage never is).
   */
  private saveOrDrop (recording: Recording, backlog: number): void {
    this.scheduled--
    const saturation = recording.fromException ? this.backlogged(backlog) : this.saturatedWith(backlog)
    if (saturation !== undefined) {
      this.drops[saturation]++
      this.release(recording.token)
      return
    }
    this.pendingSaves++
    this.windowSaves++
    this.save(recording).catch(() => undefined)
  }

  private async save (recording: Recording): Promise<void> {
    const started = performance.now()
    try {
      const saved = this.storage.save(this.build(recording))
      // the synchronous part (building, serialising) is what the main thread pays
      this.windowSpent += performance.now() - started
      await saved
      this.saved++
    } catch (error) {
      this.drops.failed++
      this.drops.lastFailure = (error as Error).message
      this.saveFailure.warn({ err: error, token: recording.token, dropped: this.dropped })
    } finally {
      this.release(recording.token)
      this.pendingSaves--
    }
  }

  /** Everything waiting is let go (a bound: what waits on units that never end). */
  private forgetWaiters (): void {
    const all = [...this.waiting.values()]
    this.waiting.clear()
    for (const waiters of all) for (const resolve of waiters) resolve()
  }

  private release (token: string): void {
    this.storage.releaseToken(token)
    this.unsaved.delete(token)
    const waiters = this.waiting.get(token)
    if (waiters === undefined) return
    this.waiting.delete(token)
    for (const resolve of waiters) resolve()
  }
}
