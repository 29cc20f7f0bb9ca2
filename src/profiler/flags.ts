import type { Profile, ProfileSummary } from './profile.js'
import { figuresOf } from './profile.js'
import type { PanelReader } from './findings.js'
import { eachPanel } from './findings.js'

/**
 * The flags a profile's summary carries, which the search page, `list_profiles` and
 * `fastify-kernel profile find` filter on (Symfony's `hasErrors()`/`hasDump()`, Laravel
 * Debugbar's `find --issues`). Each is raised by a panel's reader when the profile is built.
 */
export const PROFILE_FLAGS = {
  exception: 'an exception was thrown',
  error_logs: 'a log record of level error or fatal',
  n_plus_one: 'a likely N+1: one SQL statement shape, Redis command shape or HTTP call shape repeated for each item of a list',
  slow_statements: 'a SQL statement at or over the slow statement threshold',
  slow_calls: 'an HTTP call at or over the slow call threshold',
  failed_calls: 'a SQL statement, Redis command or HTTP call that failed',
  dumps: 'dump() calls left in the code'
} as const

export type ProfileFlag = keyof typeof PROFILE_FLAGS

export const FLAG_NAMES = Object.keys(PROFILE_FLAGS) as ProfileFlag[]

export function isFlag (name: unknown): name is ProfileFlag {
  return typeof name === 'string' && Object.hasOwn(PROFILE_FLAGS, name)
}

/** The flags the panels' readers raise for a profile, in `PROFILE_FLAGS`' order. */
export function flagsOf (profile: Profile, readers: ReadonlyArray<PanelReader<any>>): ProfileFlag[] {
  const raised = new Set(eachPanel(profile, readers, (reader, data) => reader.flags?.(data as never)).flat())
  return FLAG_NAMES.filter((flag) => raised.has(flag))
}

/** Whether a summary has the flag (the likely N+1 of profiles stored before flags: from a panel's `nPlusOne` figure). */
export function hasFlag (summary: ProfileSummary, flag: string): boolean {
  if (Array.isArray(summary.flags) && summary.flags.includes(flag)) return true
  return flag === 'n_plus_one' && Object.values(figuresOf(summary) ?? {}).some((figures) => figures?.nPlusOne === true)
}
