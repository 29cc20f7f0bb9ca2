import type { CollectedData, ProfileSummary } from '../kernel/collector.js'

export type { ProfileSummary }

/** One request, as stored: plain JSON, secrets already masked. */
export interface Profile extends ProfileSummary {
  version: 2
  aborted: boolean
  /** what each collector collected for the request, by collector name */
  collected: Partial<CollectedData> & Record<string, unknown>
}

export function summarize (profile: ProfileSummary): ProfileSummary {
  const { token, method, url, statusCode, ip, time, duration, statements, nPlusOne } = profile
  const summary: ProfileSummary = { token, method, url, statusCode, ip, time, duration }
  // figures of newer profiles only: an older one simply matches no filter on them
  if (statements !== undefined) summary.statements = statements
  if (nPlusOne !== undefined) summary.nPlusOne = nPlusOne
  return summary
}
