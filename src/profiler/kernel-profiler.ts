import type { Profile } from './profile.js'
import type { UnitOfWork } from './unit.js'
import { checkedUnit } from './unit.js'
import { errorCodes } from '../errors/codes.js'

/** A response, as `inject()` (headers as an object) or `fetch` (a Headers) give it. */
export type ProfiledResponse = { headers: { get: (name: string) => string | null } } | { headers: Record<string, unknown> }

/**
 * `app.kernelProfiler`, in every mode: app code records its units of work unconditionally, and
 * tests read profiles. Where no profiler runs (production, `profiler: false`) `record()` only
 * calls its function and `profileOf()` says there is no profile.
 */
export interface KernelProfiler {
  /** a profiler runs (debug mode with the profiler on) */
  readonly enabled: boolean
  /**
   * Runs `fn` as a unit of work of its own (a job, a command, a scheduled task, an app's kind)
   * and stores its profile — SQL, Redis, HTTP calls, logs, dumps, the timeline, what it threw —
   * as an HTTP request's is; resolves to (or rejects with) what `fn` returns (or throws). A unit
   * recorded inside another (a job run inline in a request) is linked to it as its child. `fn`
   * is given the token of the unit's profile (undefined when it is not recorded).
   *
   *     await app.kernelProfiler.record({ kind: 'command', name: 'books:import' }, () => importBooks())
   */
  record<T>(unit: UnitOfWork, fn: (token: string | undefined) => T | PromiseLike<T>): Promise<T>
  /**
   * The stored profile of a response of this app, or of a token, to assert on in tests
   * (Symfony's `$client->getProfile()`): waits for it to be stored. Throws KERNEL_NOT_PROFILED
   * when there is none.
   *
   *     const profile = await app.kernelProfiler.profileOf(await app.inject('/orders'))
   *     t.ok(profile.collected.db!.statements.length <= 3)
   */
  profileOf(response: string | ProfiledResponse): Promise<Profile>
  /** Resolves when every profile of units ended so far is stored or dropped (tests, shutdown). */
  settled(): Promise<void>
}

/** The profiler where none runs: production, or `profiler: false`. */
export const inactiveProfiler: KernelProfiler = Object.freeze({
  enabled: false,
  async record<T> (unit: UnitOfWork, fn: (token: string | undefined) => T | PromiseLike<T>): Promise<T> {
    // a mistake fails in every mode, as the options do
    checkedUnit(unit)
    return await fn(undefined)
  },
  async profileOf (): Promise<Profile> {
    throw new errorCodes.KERNEL_NOT_PROFILED('no profiler runs in this app (production, or profiler: false)')
  },
  async settled (): Promise<void> {}
})
