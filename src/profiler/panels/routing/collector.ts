import type { Collector } from '../../../kernel/collector.js'
import type { RouteDefinition } from '../../../routing/route-table.js'
import { routingOutcomeText, routingSummary, traceRoutes, VERDICT_TEXT } from '../../../routing/trace.js'
import { missTrace } from '../../request-recording.js'
import type { RouteTraceLine, RoutingData } from '../../../routing/trace.js'
import { kKernelRoute, routeMarks } from '../../../symbols.js'

/** The routing panel's data: what routing decided, for this method and raw path. */
export interface RoutingPanelData extends RoutingData {
  method: string
  path: string
}

declare module '../../../kernel/collector.js' {
  interface CollectedData {
    routing: RoutingPanelData
  }
}

function rows (value: Record<string, unknown>): Array<{ name: string, value: string }> {
  return Object.entries(value).map(([name, item]) => ({ name, value: typeof item === 'string' ? item : JSON.stringify(item) ?? '' }))
}

const OUTCOME_BADGE: Partial<Record<RoutingData['outcome'], string>> = { redirect: '301', none: '—', 'method-not-allowed': '405', 'not-found': '404' }

/** The routing panel: the matched route, or why nothing matched, and every route's verdict. */
export function routingCollector (routes: () => readonly RouteDefinition[]): Collector<RoutingPanelData> {
  return {
    name: 'routing',
    label: 'Routing',
    order: 50,
    deferred: true,
    aliases: ['router'],
    template: 'profiler/collectors/routing.hbs',
    masked: true,
    schema: {
      type: 'object',
      required: ['outcome', 'allow', 'method', 'path'],
      properties: {
        outcome: { enum: ['matched', 'redirect', 'not-found', 'method-not-allowed', 'none'] },
        route: { anyOf: [{ type: 'null' }, { type: 'object', required: ['name', 'url', 'methods'], properties: { name: { type: 'string' }, url: { type: 'string' }, methods: { type: 'array', items: { type: 'string' } }, params: { type: 'object' } } }] },
        allow: { type: 'array', items: { type: 'string' } },
        method: { type: 'string' },
        path: { type: 'string' },
        trace: { anyOf: [{ type: 'null' }, { type: 'array', items: { type: 'object', required: ['name', 'methods', 'path', 'verdict', 'reason'], properties: { methods: { type: 'array', items: { type: 'string' } } } } }] }
      }
    },
    collect ({ request, context }) {
      if (request === undefined) return undefined
      const matched = routeMarks(request.routeConfig)[kKernelRoute]
      // the panel's own copy of the shared lines
      const trace = (): RouteTraceLine[] | null => missTrace(routes(), request.method, context)?.map((line) => ({ ...line })) ?? null
      return { ...routingSummary(context, matched, trace), method: request.method, path: context.uri?.path ?? request.url.split('?')[0] }
    },
    panel (routing) {
      // a matched request stores no trace: the table is traced now, against this app's routes
      const trace = routing.trace ?? traceRoutes(routes(), routing.method, routing.path)
      return {
        outcome: routing.outcome,
        outcomeText: routingOutcomeText(routing),
        route: routing.route === null || routing.route === undefined ? null : { ...routing.route, methods: routing.route.methods.join(', '), params: rows(routing.route.params ?? {}) },
        trace: trace.map((line) => ({ ...line, methods: line.methods.join(', '), verdictText: VERDICT_TEXT[line.verdict] })),
        tracedNow: routing.trace === null || routing.trace === undefined
      }
    },
    badge (routing) {
      const text = OUTCOME_BADGE[routing.outcome]
      return text === undefined ? undefined : { text, kind: 'warning' }
    }
  }
}
