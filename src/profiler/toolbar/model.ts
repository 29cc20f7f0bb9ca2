import type { Profile } from '../profile.js'
import type { TraceEntry } from '../../kernel/trace.js'
import { availablePanels, panelLabel } from '../pages/panels.js'
import { statusKind } from '../pages/pages.js'
import { PROFILER_PATH } from '../profiler.js'

export interface ToolbarVersions {
  kernel: string
  fastify: string
  node: string
}

const MIB = 1024 * 1024

function fixed (ms: number | null | undefined, digits = 1): string | null {
  return typeof ms === 'number' && Number.isFinite(ms) ? ms.toFixed(digits) : null
}

/**
 * The controller's time: from the end of kernel.controller_arguments to the start of the stage
 * that followed it (kernel.response, or kernel.exception when it threw). Null when no
 * controller ran (a routing error) or the stages were not traced.
 */
export function controllerTime (entries: readonly TraceEntry[]): number | null {
  const stages = entries.filter((entry) => entry.listener === undefined)
  const at = stages.findIndex((entry) => entry.stage === 'kernel.controller_arguments')
  const next = at === -1 ? undefined : stages[at + 1]
  if (next === undefined) return null
  const end = stages[at].start + stages[at].duration
  return Math.max(0, next.start - end)
}

function text (value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null
}

/** What the web debug toolbar shows of one profile (`templates/profiler/toolbar.hbs`). */
export function toolbarModel (profile: Profile, versions: ToolbarVersions): Record<string, unknown> {
  const panels = availablePanels(profile)
  const base = `${PROFILER_PATH}/${profile.token}`
  const link = (panel: string): string => `${base}?panel=${encodeURIComponent(panels.includes(panel) ? panel : 'request')}`
  const errors = profile.logs.filter((record) => record.level >= 50).length
  const warnings = profile.logs.filter((record) => record.level === 40).length
  const security = (profile.collected.security ?? null) as Record<string, unknown> | null
  const locale = (profile.collected.locale ?? null) as Record<string, unknown> | null
  const exception = profile.exception?.[0]
  const authenticated = security?.authenticated === true
  return {
    token: profile.token,
    statusText: profile.statusCode === 0 ? 'aborted' : String(profile.statusCode),
    statusKind: statusKind(profile.statusCode),
    method: profile.method,
    url: profile.url,
    route: profile.request.route,
    controller: profile.routing.route?.controller ?? null,
    totalMs: fixed(profile.performance.totalMs),
    controllerMs: fixed(controllerTime(profile.events.entries)),
    firstByteMs: fixed(profile.performance.timeToFirstByteMs),
    heap: { start: (profile.performance.heapUsedStart / MIB).toFixed(1), end: (profile.performance.heapUsedEnd / MIB).toFixed(1) },
    logs: {
      total: profile.logs.length,
      errors,
      warnings,
      // the figure on the bar: errors if any, else warnings, else every record
      shown: errors > 0 ? errors : warnings > 0 ? warnings : profile.logs.length,
      kind: errors > 0 ? 'error' : warnings > 0 ? 'warning' : null
    },
    exception: exception === undefined ? null : { class: exception.class, message: exception.message, count: profile.exception!.length },
    user: {
      name: authenticated ? text(security?.user) ?? '(unnamed)' : 'anonymous',
      authenticated,
      roles: Array.isArray(security?.roles) && security.roles.length > 0 ? security.roles.join(', ') : null,
      firewall: text(security?.firewall)
    },
    locale: text(locale?.locale),
    versions,
    link: Object.fromEntries(['request', 'exception', 'performance', 'logs', 'security'].map((panel) => [panel, link(panel)])),
    panels: panels.map((name) => ({ name, label: panelLabel(name), href: link(name) }))
  }
}
