import type { Profile, ProfileSummary } from './profile.js'
import { summarize } from './profile.js'
import type { Finding, FindingSeverity, PanelReader } from './findings.js'
import { eachPanel } from './findings.js'

/** A profile's triage: what is wrong with it, the worst first. */
export interface Triage {
  profile: ProfileSummary & { aborted: boolean }
  /** `2 errors, 3 warnings, 5 notes`, or that nothing was found */
  verdict: string
  counts: Record<FindingSeverity, number>
  /** ranked: errors first, then warnings, then notes; within each, the costliest in time, then the most repeated */
  findings: Array<Finding & { rank: number }>
  /** findings left out past the limit */
  omitted: number
}

const ORDER: Record<FindingSeverity, number> = { error: 0, warning: 1, info: 2 }

function plural (count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`
}

/**
 * What is wrong with a profile, in one answer (Symfony AI Mate's `profiler-triage`): every
 * panel's findings — likely N+1s with their count, time and origin, slow and failed calls, the
 * exception with its first frame of the app, error and warning logs, the slowest spans — ranked
 * (errors, the exception first, then warnings, then notes; the costliest in time, then the most
 * repeated, first), each with what to look at; at most `limit`.
 */
export function triage (profile: Profile, readers: ReadonlyArray<PanelReader<any>>, limit = 20): Triage {
  const all = eachPanel(profile, readers, (reader, data) => reader.findings?.(data as never)).flat()
  // the exception first among errors: what failed, before what it caused (its log record)
  const first = (finding: Finding): number => finding.kind === 'exception' ? 0 : 1
  all.sort((a, b) => ORDER[a.severity] - ORDER[b.severity] || first(a) - first(b) || (b.timeMs ?? 0) - (a.timeMs ?? 0) || (b.count ?? 0) - (a.count ?? 0))
  const counts: Record<FindingSeverity, number> = { error: 0, warning: 0, info: 0 }
  for (const finding of all) counts[finding.severity]++
  const kept = all.slice(0, Math.max(0, limit))
  const problems = counts.error + counts.warning
  const verdict = problems === 0
    ? `No problem found (${plural(counts.info, 'note')})`
    : [counts.error > 0 ? plural(counts.error, 'error') : '', counts.warning > 0 ? plural(counts.warning, 'warning') : '', counts.info > 0 ? plural(counts.info, 'note') : ''].filter((part) => part !== '').join(', ')
  return {
    profile: { ...summarize(profile), aborted: profile.aborted },
    verdict,
    counts,
    findings: kept.map((finding, index) => ({ rank: index + 1, ...finding })),
    omitted: all.length - kept.length
  }
}
