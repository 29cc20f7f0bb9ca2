import type { Collector } from '../../kernel/collector.js'
import type { Profile, ProfileSummary } from '../profile.js'
import type { FigureFilter, ProfileFilter } from '../storage/storage.js'
import { PROFILER_PATH as BASE } from '../recording.js'
import type { Panels } from './panels.js'
import { statusOfSummary } from './status.js'
import { BUILT_IN_KINDS } from '../unit.js'
import { FLAG_NAMES, isFlag } from '../flags.js'
import type { Drops } from '../saves.js'

/** The layout's data: a page is the layout plus one content partial. */
export interface PageModel {
  title: string
  contentPartial: string
  [key: string]: unknown
}

function when (epochMs: number): string {
  const date = new Date(epochMs)
  // storage is checked on reading; this only keeps a bad date from ever costing a 500
  if (Number.isNaN(date.getTime())) return '(invalid date)'
  return date.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC')
}

/** A panel's name as a search result names it (its label, in lower case). */
export type PanelLabel = (name: string) => string

/** The flags as the search page names them (the likely N+1 has its own checkbox, and its own column). */
export const FLAG_LABELS: Readonly<Record<string, string>> = { exception: 'Exception', error_logs: 'Error logs', n_plus_one: 'Likely N+1', slow_statements: 'Slow SQL', slow_calls: 'Slow HTTP calls', failed_calls: 'Failed calls', dumps: 'Dumps' }

/**
 * A search result (and a side of the compare page): the summary, the two figures the page shows
 * (the Database panel's statements, the panels that flagged a likely N+1) and its other flags.
 */
export function summaryRow (summary: ProfileSummary, label: PanelLabel = (name) => name): Record<string, unknown> {
  const figures = summary.figures ?? {}
  const statements = figures.db?.statements
  const nPlusOne = Object.keys(figures).filter((panel) => figures[panel]?.nPlusOne === true)
  return {
    ...summary,
    kind: summary.kind ?? 'request',
    ...statusOfSummary(summary),
    when: when(summary.time),
    link: `${BASE}/${summary.token}`,
    // older profiles do not say
    statements: typeof statements === 'number' ? statements : null,
    nPlusOne: nPlusOne.length > 0 ? nPlusOne.map(label).join(', ') : null,
    flagLabels: (summary.flags ?? []).filter((flag) => flag !== 'n_plus_one').map((flag) => FLAG_LABELS[flag] ?? flag)
  }
}

/**
 * A stored profile, one panel shown; `collector`'s panel is known to be available. `children`:
 * the units recorded as part of it (a job it ran or queued, a request it injected).
 */
export function profilePage (profile: Profile, collector: Collector<unknown>, panels: Panels, neighbours: { previous?: string, next?: string }, children: readonly ProfileSummary[] = []): PageModel {
  const panel = collector.name
  return {
    title: `${profile.method} ${profile.url} (${profile.token}) — ${collector.label}`,
    contentPartial: 'profile',
    summary: { ...summaryRow(profile), duration: profile.duration, aborted: profile.aborted, unit: profile.kind !== undefined && profile.kind !== 'request' },
    parent: profile.parent === undefined ? null : { token: profile.parent, link: `${BASE}/${profile.parent}` },
    children: children.map((child) => summaryRow(child, panels.label)),
    previous: neighbours.previous === undefined ? null : `${BASE}/${neighbours.previous}?panel=${panel}`,
    next: neighbours.next === undefined ? null : `${BASE}/${neighbours.next}?panel=${panel}`,
    menu: panels.menu(profile, panel),
    panel,
    panelLabel: collector.label,
    panelHtml: panels.panelHtml(profile, collector)
  }
}

/** The newest profile before and after this one, by time. */
export function neighboursOf (token: string, newestFirst: readonly ProfileSummary[]): { previous?: string, next?: string } {
  const at = newestFirst.findIndex((summary) => summary.token === token)
  if (at === -1) return {}
  return { next: newestFirst[at - 1]?.token, previous: newestFirst[at + 1]?.token }
}

export function tokenNotFoundPage (token: string): PageModel {
  return { title: `Token "${token}" not found`, contentPartial: 'missing', token }
}

export function noProfilesPage (): PageModel {
  return { title: 'No profiles', contentPartial: 'missing', message: 'No profiles have been stored yet.' }
}

const MAX_FILTER = 2048

/** A query parameter's value: repeated (`?a=1&a=2`), the last one, as PHP reads it. */
export function lastQueryValue (value: unknown): unknown {
  return Array.isArray(value) ? value.at(-1) : value
}

function one (value: unknown): string | undefined {
  const v = lastQueryValue(value)
  return typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, MAX_FILTER) : undefined
}

function time (value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  // datetime-local inputs send no zone: read them as UTC, as the page shows times
  const ms = Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`)
  return Number.isFinite(ms) ? ms : undefined
}

/** A number of the form: at least 0, an integer if asked; undefined (and a problem said) otherwise. */
function count (value: string | undefined, label: string, integer: boolean, problems: string[]): number | undefined {
  if (value === undefined) return undefined
  const number = Number(value)
  if (value.trim() !== '' && Number.isFinite(number) && number >= 0 && (!integer || Number.isInteger(number))) return number
  problems.push(`${label} "${value}" is not ${integer ? 'a whole number' : 'a number'} of 0 or more: not applied.`)
  return undefined
}

const CHECKED = new Set(['1', 'on', 'true', 'yes'])

/** `?flag=exception&flag=dumps`: the flags asked for (every one of them must be there); an unknown one is said, not applied. */
function flagsOfQuery (value: unknown, problems: string[]): string[] {
  const values = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string' && v.trim() !== '').slice(0, 16)
  const flags: string[] = []
  for (const raw of values) {
    const flag = raw.trim()
    if (isFlag(flag)) { if (!flags.includes(flag)) flags.push(flag) } else problems.push(`Flag "${flag.slice(0, 64)}" is not one of ${FLAG_NAMES.join(', ')}: not applied.`)
  }
  return flags
}

/**
 * The search filters from a query string. A malformed value is not applied and the page says so
 * (`problems`, shown escaped): never an error page.
 */
export function parseFilter (query: unknown): { filter: ProfileFilter, form: Record<string, string>, problems: string[] } {
  const q = (typeof query === 'object' && query !== null ? query : {}) as Record<string, unknown>
  const problems: string[] = []
  const method = one(q.method)
  const status = one(q.status)
  const kind = one(q.kind)
  const limitText = one(q.limit)
  const limit = Number(limitText ?? 50)
  if (limitText !== undefined && !(Number.isInteger(limit) && limit > 0)) problems.push(`Limit "${limitText}" is not a whole number above 0: 50 shown.`)
  const form = {
    kind: kind ?? '',
    name: one(q.name) ?? '',
    method: method ?? '',
    status: status ?? '',
    url: one(q.url) ?? '',
    ip: one(q.ip) ?? '',
    start: one(q.start) ?? '',
    end: one(q.end) ?? '',
    minDuration: one(q.min_duration) ?? '',
    minStatements: one(q.min_statements) ?? '',
    nPlusOne: CHECKED.has((one(q.n_plus_one) ?? '').toLowerCase()) ? '1' : '',
    issues: CHECKED.has((one(q.issues) ?? '').toLowerCase()) ? '1' : '',
    flags: flagsOfQuery(q.flag, problems).join(','),
    limit: String(Number.isInteger(limit) && limit > 0 ? Math.min(limit, 500) : 50)
  }
  const validMethod = method !== undefined && /^[A-Za-z]{1,16}$/.test(method)
  if (method !== undefined && !validMethod) problems.push(`Method "${method}" is not an HTTP method: not applied.`)
  const validStatus = status !== undefined && /^([1-5]\d\d|[1-5]xx|failed|ok)$/i.test(status)
  if (status !== undefined && !validStatus) problems.push(`Status "${status}" is not a status (404), a class (4xx) nor an outcome (failed, ok): not applied.`)
  const start = time(form.start || undefined)
  if (form.start !== '' && start === undefined) problems.push(`From "${form.start}" is not a date and time: not applied.`)
  const end = time(form.end || undefined)
  if (form.end !== '' && end === undefined) problems.push(`Until "${form.end}" is not a date and time: not applied.`)
  const filter: ProfileFilter = {
    kind: kind !== undefined && /^[a-z][a-z0-9_-]{0,31}$/.test(kind) ? kind : undefined,
    name: form.name || undefined,
    method: validMethod ? method : undefined,
    status: validStatus ? status : undefined,
    url: form.url || undefined,
    ip: form.ip || undefined,
    start,
    end,
    minDuration: count(form.minDuration || undefined, 'Minimum time', false, problems),
    flags: form.flags === '' ? undefined : form.flags.split(','),
    issues: form.issues === '1' ? true : undefined,
    limit: Number(form.limit)
  }
  // the Database panel's figure, and any panel's N+1 flag
  const minStatements = count(form.minStatements || undefined, 'Minimum SQL statements', true, problems)
  const figures: FigureFilter[] = []
  if (minStatements !== undefined) figures.push({ panel: 'db', figure: 'statements', min: minStatements })
  if (form.nPlusOne === '1') figures.push({ figure: 'nPlusOne' })
  if (figures.length > 0) filter.figures = figures
  return { filter, form, problems }
}

/** Why this process's units were not profiled, each reason with its count: the real one, not a guess. */
export function dropReasons (drops: Drops): string[] {
  const reasons: string[] = []
  if (drops.budget > 0) reasons.push(`${drops.budget} over the save budget (heavy load: the profiler spent its share of the second)`)
  if (drops.backlog > 0) reasons.push(`${drops.backlog} while the storage was behind (saves waiting beyond its bound)`)
  if (drops.token > 0) reasons.push(`${drops.token} without a token: the storage could not reserve one (unreachable, or slow to answer)`)
  if (drops.failed > 0) reasons.push(`${drops.failed} whose save failed${drops.lastFailure === undefined ? '' : ` (the last one: ${drops.lastFailure})`}`)
  return reasons
}

export function searchPage (results: readonly ProfileSummary[], form: Record<string, string>, stored: number, drops: Drops = { budget: 0, backlog: 0, token: 0, failed: 0 }, problems: readonly string[] = [], label?: PanelLabel): PageModel {
  const dropped = drops.budget + drops.backlog + drops.token + drops.failed
  return {
    title: 'Profiler: search',
    contentPartial: 'search',
    form,
    kinds: BUILT_IN_KINDS,
    problems,
    methods: ['', 'GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].map((m) => ({ value: m, label: m === '' ? 'any' : m, selected: m === form.method.toUpperCase() })),
    flagOptions: FLAG_NAMES.filter((flag) => flag !== 'n_plus_one').map((flag) => ({ name: flag, label: FLAG_LABELS[flag], checked: (form.flags ?? '').split(',').includes(flag) })),
    results: results.map((summary) => summaryRow(summary, label)),
    count: results.length,
    stored,
    dropped,
    dropReasons: dropReasons(drops).join('; ')
  }
}
