import type { Profile } from './profile.js'
import { jsonSizeBound } from './storage/json-size.js'
import { cutMark } from './bounded-value.js'

/**
 * The most a profile may take, as JSON, on every storage (the memory storage builds it when it is
 * read; the file and Redis storages write it): a larger one is cut before any storage gets it.
 */
export const MAX_PROFILE_BYTES = 8 * 1024 * 1024
/** The lengths long strings are cut to, in turn, until the profile fits. */
const CUTS = [64 * 1024, 8 * 1024, 1024, 200]

function cutStrings (value: unknown, max: number, seen: Set<object>): void {
  if (value === null || typeof value !== 'object' || seen.has(value)) return
  seen.add(value)
  const record = value as Record<string, unknown>
  for (const key of Object.keys(record)) {
    const member = record[key]
    if (typeof member === 'string' && member.length > max) record[key] = `${member.slice(0, max)}${cutMark(member.length - max)}`
    else if (typeof member === 'object') cutStrings(member, max, seen)
  }
}

function megabytes (bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`
}

/**
 * Bounds a profile just built (its own data: cut in place) to `max` bytes of JSON: long strings
 * of its panels are cut, shorter each round, each with its mark; if that is not enough, the
 * largest panels are left out. `profile.cut` says what was done (the profile page shows it).
 */
export function boundProfile (profile: Profile, max = MAX_PROFILE_BYTES): void {
  const before = jsonSizeBound(profile)
  if (before <= max) return
  let size = before
  for (const limit of CUTS) {
    cutStrings(profile.collected, limit, new Set())
    size = jsonSizeBound(profile)
    if (size <= max) break
  }
  const left: string[] = []
  while (size > max) {
    const sizes = Object.entries(profile.collected).map(([name, data]) => [name, jsonSizeBound(data)] as const).sort((a, b) => b[1] - a[1])
    const largest = sizes[0]
    if (largest === undefined) break
    delete profile.collected[largest[0]]
    left.push(largest[0])
    size = jsonSizeBound(profile)
  }
  profile.cut = `${profile.cut === undefined ? '' : `${profile.cut} `}This profile took ${megabytes(before)}, over the ${megabytes(max)} a profile may take: its long values were cut (marked "cut by the profiler")${left.length > 0 ? `, and these panels left out: ${left.join(', ')}` : ''}.`
}
