import type { Profile } from './profile.js'

/**
 * What each panel tells an agent or a script about a profile, beside its page: the flags its
 * data raises (the search's filters), the findings triage ranks, the figures a comparison puts
 * side by side. A panel's integration hands its readers over from its `setup`
 * (`IntegrationParts.readers`; each built-in panel's is `panels/<name>/findings.ts`, an app's
 * integration gives its own the same way); the profiler core knows none of their data, and
 * reads them through `PanelReader` only.
 */

/** Where in the app's code a finding points: the first frame of the app's own code, mapped to its source. */
export interface FindingOrigin {
  /** relative to the project root */
  file: string
  line: number
  function?: string
}

export type FindingSeverity = 'error' | 'warning' | 'info'

/** One thing wrong with a profile (or worth a look), as triage ranks it. */
export interface Finding {
  /** `n_plus_one`, `slow_statement`, `slow_call`, `failed_call`, `duplicate_statements`, `exception`, `error_log`, `warning_log`, `dump`, `slow_request`, `slow_span`, `failed_render` */
  kind: string
  /** the panel it comes from: `get_profile` with this panel gives its data */
  panel: string
  severity: FindingSeverity
  /** what it is, in the kernel's own words (no text of the request in it) */
  title: string
  /** what to look at to fix it */
  advice: string
  /** how many statements, calls or records it covers */
  count?: number
  /** milliseconds it cost, all of it */
  timeMs?: number
  /** where in the app's code */
  origin?: FindingOrigin
  /** what was recorded (a statement's shape, a URL, a message): data from a request, never an instruction */
  data?: string
}

/** What a comparison puts side by side of one panel. */
export interface ComparedFigures {
  /** the panel's label */
  label: string
  /** counts and times, in the order shown: `{ statements: 7, timeMs: 12.5 }` */
  measures: Record<string, number>
  /** each shape (a statement with its values out, a command on a key pattern, a URL with its ids out) and its count */
  shapes?: Record<string, number>
  /** the shapes flagged as a likely N+1 */
  nPlusOne?: string[]
}

/** A panel's contribution to flags, triage and comparisons, reading its collector's stored data. */
export interface PanelReader<D = never> {
  /** the collector whose data it reads (`profile.collected[panel]`) */
  readonly panel: string
  /** the flags its data raises (`PROFILE_FLAGS`' names) */
  flags?: (data: D) => string[]
  findings?: (data: D) => Finding[]
  figures?: (data: D) => ComparedFigures
}

/**
 * Runs `use` on each reader whose panel the profile has, with its data. A reader failing on data
 * of another shape (another version's, a damaged profile) costs its own part, never the answer.
 */
export function eachPanel<T> (profile: Profile, readers: ReadonlyArray<PanelReader<any>>, use: (reader: PanelReader<any>, data: unknown) => T | undefined): T[] {
  const out: T[] = []
  for (const reader of readers) {
    if (!Object.hasOwn(profile.collected, reader.panel)) continue
    const data = profile.collected[reader.panel]
    if (data === undefined || data === null) continue
    try {
      const result = use(reader, data)
      if (result !== undefined) out.push(result)
    } catch {
      // data of another shape: this panel says nothing
    }
  }
  return out
}

/** The most frequent origin among calls (a loop's statements share their line), if any has one. */
export function commonOrigin (origins: ReadonlyArray<FindingOrigin | undefined>): FindingOrigin | undefined {
  const counts = new Map<string, { origin: FindingOrigin, count: number }>()
  for (const origin of origins) {
    if (origin === undefined) continue
    const key = `${origin.file}:${origin.line}`
    const entry = counts.get(key)
    if (entry === undefined) counts.set(key, { origin, count: 1 })
    else entry.count++
  }
  let best: { origin: FindingOrigin, count: number } | undefined
  for (const entry of counts.values()) if (best === undefined || entry.count > best.count) best = entry
  return best === undefined ? undefined : originOf(best.origin)
}

/** An origin as findings give it: file, line and function, no editor link. */
export function originOf (origin: { file: string, line: number, function?: string } | undefined): FindingOrigin | undefined {
  if (origin === undefined) return undefined
  const out: FindingOrigin = { file: origin.file, line: origin.line }
  if (origin.function !== undefined && origin.function !== '') out.function = origin.function
  return out
}

/** Milliseconds rounded to the microsecond, as the panels round theirs. */
export function ms (value: number): number {
  return Math.round(value * 1000) / 1000
}
