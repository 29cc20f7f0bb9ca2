import type { Profile } from '../profile.js'
import type { RouteDefinition } from '../../routing/route-table.js'
import { routingOutcomeText, traceRoutes, VERDICT_TEXT } from '../../routing/trace.js'
import { traceView } from '../../errors/trace-view.js'

/** The panels every profile has, in menu order. */
export const BASE_PANELS = ['request', 'exception', 'routing', 'events', 'logs', 'performance'] as const
/** Collected data shown inside another panel rather than in one of its own. */
const SHOWN_ELSEWHERE = new Set(['locale'])
const LABELS: Record<string, string> = {
  request: 'Request / Response',
  exception: 'Exception',
  routing: 'Routing',
  events: 'Events',
  logs: 'Logs',
  performance: 'Performance',
  session: 'Session',
  security: 'Security'
}
/** Collected keys with a panel of their own; any other key gets the generic one. */
const DEDICATED = new Set(['session', 'security'])

export type Row = { name: string, value: string }

function text (value: unknown): string {
  if (typeof value === 'string') return value
  if (value === null || value === undefined) return ''
  return JSON.stringify(value) ?? String(value)
}

function rows (value: unknown): Row[] {
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).map(([name, item]) => ({ name, value: text(item) }))
}

function pairs (list: Array<[string, string]> | undefined): Row[] {
  return (list ?? []).map(([name, value]) => ({ name, value }))
}

function pretty (value: unknown): string {
  return JSON.stringify(value, null, 2) ?? ''
}

/** The panels a profile offers: the base ones, then one per collected key. */
export function availablePanels (profile: Profile): string[] {
  const names: string[] = [...BASE_PANELS]
  for (const key of Object.keys(profile.collected ?? {})) {
    if (!SHOWN_ELSEWHERE.has(key) && !names.includes(key)) names.push(key)
  }
  return names
}

/** `exception` when the request failed, else `request`, as Symfony chooses. */
export function defaultPanel (profile: Profile): string {
  return profile.exception !== null && profile.exception.length > 0 ? 'exception' : 'request'
}

export function panelLabel (name: string): string {
  return LABELS[name] ?? name.charAt(0).toUpperCase() + name.slice(1)
}

/** A short figure next to a panel's name in the menu. */
export function panelBadge (profile: Profile, name: string): { text: string, kind: string } | undefined {
  switch (name) {
    case 'exception': return profile.exception !== null && profile.exception.length > 0 ? { text: String(profile.exception.length), kind: 'error' } : undefined
    case 'logs': {
      const errors = profile.logs.filter((r) => r.level >= 50).length
      const warnings = profile.logs.filter((r) => r.level === 40).length
      if (errors > 0) return { text: String(errors), kind: 'error' }
      if (warnings > 0) return { text: String(warnings), kind: 'warning' }
      return profile.logs.length > 0 ? { text: String(profile.logs.length), kind: 'info' } : undefined
    }
    case 'performance': return { text: `${profile.performance.totalMs.toFixed(1)} ms`, kind: 'info' }
    case 'events': return { text: String(profile.events.entries.filter((e) => e.listener === undefined).length), kind: 'info' }
    case 'routing': return profile.routing.outcome === 'matched' ? undefined : { text: profile.routing.outcome === 'redirect' ? '301' : profile.routing.outcome === 'none' ? '—' : profile.routing.outcome === 'method-not-allowed' ? '405' : '404', kind: 'warning' }
    default: return undefined
  }
}

function requestPanel (profile: Profile): object {
  const request = profile.request
  const locale = profile.collected?.locale as Record<string, unknown> | undefined
  return {
    summary: [
      { name: 'Method', value: request.method },
      { name: 'URL', value: request.url },
      { name: 'Path', value: request.path },
      { name: 'Route', value: request.route ?? '(none)' },
      { name: 'Client IP', value: request.ip },
      { name: 'Protocol', value: `${request.protocol.toUpperCase()} / HTTP ${request.httpVersion}` },
      ...(locale !== undefined ? [{ name: 'Locale', value: text(locale.locale) }] : [])
    ],
    query: rows(request.query),
    attributes: pairs(request.attributes),
    headers: pairs(request.headers),
    cookies: pairs(request.cookies),
    body: request.body === null
      ? null
      : { contentType: request.body.contentType ?? '(none)', length: request.body.length ?? '(unknown)', content: typeof request.body.content === 'string' ? request.body.content : request.body.content === null ? '' : pretty(request.body.content) },
    locale: locale === undefined ? null : rows(locale),
    response: profile.response === null
      ? null
      : {
          statusCode: profile.response.statusCode,
          statusText: profile.response.statusText,
          contentType: profile.response.contentType ?? '(none)',
          size: profile.response.size === null ? '(streamed)' : `${profile.response.size} bytes`,
          headers: pairs(profile.response.headers)
        },
    aborted: profile.aborted
  }
}

function exceptionPanel (profile: Profile): object {
  const chain = profile.exception ?? []
  return {
    none: chain.length === 0,
    chain: chain.map((exception, index) => ({
      ...exception,
      position: index + 1,
      isCause: index > 0,
      causeOf: index > 0 ? chain[index - 1].class : null,
      // the response's status, or a cause's own; a cause without one has no status to show
      // (profiles stored before `isHttp` existed show the outermost's only)
      showStatus: index === 0 || exception.isHttp === true,
      ...traceView(exception.trace)
    }))
  }
}

function routingPanel (profile: Profile, routes: readonly RouteDefinition[]): object {
  const routing = profile.routing
  // a matched request stores no trace: the table is traced now, against this app's routes
  const trace = routing.trace ?? traceRoutes(routes, profile.method, profile.request.path)
  return {
    outcome: routing.outcome,
    outcomeText: routingOutcomeText(routing),
    route: routing.route === null ? null : { ...routing.route, methods: routing.route.methods.join(', '), params: rows(routing.route.params) },
    trace: trace.map((line) => ({ ...line, methods: line.methods.join(', '), verdictText: VERDICT_TEXT[line.verdict] })),
    tracedNow: routing.trace === null
  }
}

function eventsPanel (profile: Profile): object {
  const entries = profile.events.entries
  const end = Math.max(profile.performance.totalMs, ...entries.map((e) => e.start + e.duration), 0.001)
  const percent = (ms: number): string => Math.min(100, Math.max(0, (ms / end) * 100)).toFixed(3)
  const stageOrder: string[] = []
  for (const entry of entries) if (entry.listener === undefined && !stageOrder.includes(entry.stage)) stageOrder.push(entry.stage)
  return {
    tracing: profile.events.tracing,
    empty: entries.length === 0,
    totalMs: end,
    stageOrder: stageOrder.join(' › '),
    ticks: [0, 0.25, 0.5, 0.75, 1].map((f) => ({ left: (f * 100).toFixed(0), label: (f * end).toFixed(2) })),
    rows: entries.map((entry) => ({
      stage: entry.stage,
      listener: entry.listener,
      isStage: entry.listener === undefined,
      priority: entry.priority,
      start: entry.start,
      duration: entry.duration,
      outcome: entry.outcome,
      left: percent(entry.start),
      // a listener of a few microseconds still shows as a sliver
      width: Math.max(0.4, Number(percent(entry.duration))).toFixed(3)
    }))
  }
}

function logsPanel (profile: Profile): object {
  const counts = new Map<string, number>()
  for (const record of profile.logs) counts.set(record.levelName, (counts.get(record.levelName) ?? 0) + 1)
  return {
    empty: profile.logs.length === 0,
    counts: [...counts].map(([level, count]) => ({ level, count })),
    records: profile.logs.map((record) => ({
      ...record,
      levelClass: record.level >= 50 ? 'error' : record.level === 40 ? 'warning' : record.level <= 20 ? 'debug' : 'info',
      context: record.context === null || (typeof record.context === 'object' && Object.keys(record.context as object).length === 0) ? '' : pretty(record.context)
    }))
  }
}

function performancePanel (profile: Profile): object {
  const p = profile.performance
  const mb = (bytes: number): string => (bytes / 1048576).toFixed(1)
  const ttfb = p.timeToFirstByteMs
  const entries = profile.events.entries
  const controllerEnd = entries.find((e) => e.listener === undefined && (e.stage === 'kernel.response' || e.stage === 'kernel.exception'))
  const argumentsStage = entries.find((e) => e.listener === undefined && e.stage === 'kernel.controller_arguments')
  const controllerMs = controllerEnd !== undefined && argumentsStage !== undefined ? Math.max(0, controllerEnd.start - (argumentsStage.start + argumentsStage.duration)) : null
  const total = Math.max(p.totalMs, 0.001)
  return {
    totalMs: p.totalMs,
    ttfb,
    controllerMs,
    bars: [
      { label: 'Time to first byte', ms: ttfb ?? 0, width: (((ttfb ?? 0) / total) * 100).toFixed(1) },
      ...(controllerMs !== null ? [{ label: 'Controller', ms: controllerMs, width: ((controllerMs / total) * 100).toFixed(1) }] : []),
      { label: 'Total', ms: p.totalMs, width: '100.0' }
    ],
    heapStart: mb(p.heapUsedStart),
    heapEnd: mb(p.heapUsedEnd),
    heapDelta: `${p.heapUsedEnd >= p.heapUsedStart ? '+' : ''}${mb(p.heapUsedEnd - p.heapUsedStart)}`
  }
}

function sessionPanel (data: Record<string, unknown>): object {
  const flashes = (data.flashes ?? {}) as Record<string, unknown>
  return {
    rows: ['exists', 'isNew', 'regenerated', 'cookieSet', 'idPrefix'].map((name) => ({ name, value: text(data[name] ?? null) || '(none)' })),
    attributes: rows(data.attributes),
    flashes: Object.entries(flashes).map(([type, messages]) => ({ type, messages: Array.isArray(messages) ? messages.map(text) : [text(messages)] }))
  }
}

function securityPanel (data: Record<string, unknown>): object {
  const rule = data.accessRule as { path?: unknown, roles?: unknown } | null | undefined
  const decision = text(data.decision ?? 'none')
  return {
    decision,
    decisionClass: decision === 'granted' ? 'success' : decision === 'none' ? 'info' : 'error',
    rows: [
      { name: 'Firewall', value: text(data.firewall ?? null) || '(none)' },
      { name: 'Stateless', value: text(data.stateless ?? false) },
      { name: 'Authenticated', value: text(data.authenticated ?? false) },
      { name: 'User', value: text(data.user ?? null) || '(anonymous)' },
      { name: 'Roles', value: Array.isArray(data.roles) ? data.roles.map(text).join(', ') || '(none)' : '(none)' },
      { name: 'Authenticator', value: text(data.authenticator ?? null) || '(none)' },
      { name: 'Access rule', value: rule === null || rule === undefined ? '(none)' : `${text(rule.path)} → ${Array.isArray(rule.roles) ? rule.roles.map(text).join(', ') : ''}` },
      { name: 'Decision', value: decision },
      ...(data.reason !== undefined ? [{ name: 'Reason', value: text(data.reason) }] : [])
    ]
  }
}

/** Generic panel for any other collected key: a table of its fields, or its JSON. */
function genericPanel (data: unknown): object {
  const flat = typeof data === 'object' && data !== null && !Array.isArray(data) && Object.values(data).every((v) => v === null || typeof v !== 'object')
  return { rows: flat ? rows(data) : [], pretty: flat ? '' : pretty(data) }
}

/** The template partial and data of one panel. */
export function panelModel (profile: Profile, name: string, routes: readonly RouteDefinition[]): { partial: string, data: object } {
  switch (name) {
    case 'request': return { partial: 'panel-request', data: requestPanel(profile) }
    case 'exception': return { partial: 'panel-exception', data: exceptionPanel(profile) }
    case 'routing': return { partial: 'panel-routing', data: routingPanel(profile, routes) }
    case 'events': return { partial: 'panel-events', data: eventsPanel(profile) }
    case 'logs': return { partial: 'panel-logs', data: logsPanel(profile) }
    case 'performance': return { partial: 'panel-performance', data: performancePanel(profile) }
  }
  const data = profile.collected[name]
  if (DEDICATED.has(name) && typeof data === 'object' && data !== null) {
    return name === 'session'
      ? { partial: 'panel-session', data: sessionPanel(data as Record<string, unknown>) }
      : { partial: 'panel-security', data: securityPanel(data as Record<string, unknown>) }
  }
  return { partial: 'panel-generic', data: genericPanel(data) }
}
