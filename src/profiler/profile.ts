import type { CollectedData, ProfileSummary } from '../kernel/collector.js'

export type { ProfileSummary }

/** One request, as stored: plain JSON, secrets already masked. */
export interface Profile extends ProfileSummary {
  version: 2
  aborted: boolean
  /** what each collector collected for the request, by collector name */
  collected: Partial<CollectedData> & Record<string, unknown>
  /** the profile was larger than a profile may be, and was cut: what was done (profile-bound.ts) */
  cut?: string
}

export function summarize (profile: ProfileSummary): ProfileSummary {
  const { token, kind, name, parent, method, url, statusCode, ip, time, duration, statements, nPlusOne } = profile
  const summary: ProfileSummary = { token, method, url, statusCode, ip, time, duration }
  // written only when they say something: a request's summary stays as it was
  if (kind !== undefined && kind !== 'request') summary.kind = kind
  if (name !== undefined) summary.name = name
  if (parent !== undefined) summary.parent = parent
  // figures of newer profiles only: an older one simply matches no filter on them
  if (statements !== undefined) summary.statements = statements
  if (nPlusOne !== undefined) summary.nPlusOne = nPlusOne
  return summary
}

/** The kind of unit a profile records (`request` for profiles stored before there were others). */
export function kindOf (summary: ProfileSummary): string {
  return summary.kind ?? 'request'
}
