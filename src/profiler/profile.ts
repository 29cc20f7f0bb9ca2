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
  const { token, method, url, statusCode, ip, time, duration } = profile
  return { token, method, url, statusCode, ip, time, duration }
}
