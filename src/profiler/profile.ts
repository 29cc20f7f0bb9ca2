import type { CollectedData, PanelFigures, ProfileFigures, ProfileSummary } from '../kernel/collector.js'

export type { ProfileSummary, ProfileFigures, PanelFigures }

/** One unit (an HTTP request, a job, a command…), as stored: plain JSON, secrets already masked. */
export interface Profile extends ProfileSummary {
  version: 2
  aborted: boolean
  /** what each collector collected for the unit, by collector name */
  collected: Partial<CollectedData> & Record<string, unknown>
  /** the profile was larger than a profile may be, and was cut: what was done (profile-bound.ts) */
  cut?: string
}

export function summarize (profile: ProfileSummary): ProfileSummary {
  const { token, kind, name, parent, method, url, statusCode, ip, time, duration, flags } = profile
  const summary: ProfileSummary = { token, method, url, statusCode, ip, time, duration }
  // written only when they say something: a request's summary stays as it was
  if (kind !== undefined && kind !== 'request') summary.kind = kind
  if (name !== undefined) summary.name = name
  if (parent !== undefined) summary.parent = parent
  // figures of newer profiles only: an older one simply matches no filter on them
  const figures = figuresOf(profile)
  if (figures !== undefined) summary.figures = figures
  if (flags !== undefined) summary.flags = flags
  return summary
}

/** A panel's figures as kept: its finite numbers and booleans (undefined: none). */
export function plainFigures (given: unknown): PanelFigures | undefined {
  if (typeof given !== 'object' || given === null) return undefined
  let kept: PanelFigures | undefined
  for (const [name, value] of Object.entries(given)) {
    if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) (kept ??= {})[name] = value
  }
  return kept
}

/**
 * What the previous format kept at the summary's top (`statements`: the Database panel's count;
 * `nPlusOne`: the names of the panels that flagged a likely N+1), read as the panels' figures.
 */
interface PreviousFigures {
  statements?: unknown
  nPlusOne?: unknown
}

/**
 * A stored summary's figures: its own, or those the previous format kept at its top, read as
 * the panels' (`{ db: { statements } }`, `{ <panel>: { nPlusOne: true } }`).
 */
export function figuresOf (summary: ProfileSummary): ProfileFigures | undefined {
  if (summary.figures !== undefined) return summary.figures
  const { statements, nPlusOne } = summary as ProfileSummary & PreviousFigures
  let figures: ProfileFigures | undefined
  if (typeof statements === 'number') figures = { db: { statements } }
  if (Array.isArray(nPlusOne)) {
    for (const panel of nPlusOne) if (typeof panel === 'string') ((figures ??= {})[panel] ??= {}).nPlusOne = true
  }
  return figures
}

/**
 * A stored summary (or profile) read from a storage, in this version's shape: the previous
 * format's figures moved under `figures` (see figuresOf). Changes `stored` in place (it was just parsed).
 */
export function upgradeSummary<S extends ProfileSummary> (stored: S): S {
  const previous = stored as S & PreviousFigures
  if (previous.statements === undefined && previous.nPlusOne === undefined) return stored
  const figures = figuresOf(stored)
  delete previous.statements
  delete previous.nPlusOne
  if (figures !== undefined) stored.figures = figures
  return stored
}

/** The kind of unit a profile records (`request` for profiles stored before there were others). */
export function kindOf (summary: ProfileSummary): string {
  return summary.kind ?? 'request'
}
