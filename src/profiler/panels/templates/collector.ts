import type { Collector } from '../../../kernel/collector.js'
import { truncate } from '../../../http/redact.js'
import { recordingOf } from '../../recording.js'
import type { SpanOrigin } from '../../origin.js'
import type { TemplateRun } from './template-runs.js'
import { roundMs } from '../../panel-kit/calls.js'

/** A template run by a render (its page, its layout, a partial), with what it ran in turn. */
export interface TemplateRunRecord {
  name: string
  kind: TemplateRun['kind']
  count: number
  /** milliseconds, its partials' time included */
  ms: number
  children: TemplateRunRecord[]
}

/** One render through the app's @fastify/view. */
export interface TemplateRender {
  template: string
  layout?: string
  /** milliseconds from the start of the unit */
  start: number
  /** null: still rendering when the response was sent */
  duration: number | null
  error?: string
  /** where in the app's code it was called */
  origin?: SpanOrigin
  /**
   * what it ran, nested (handlebars: the page, the layout, each partial under what included it,
   * each name once per parent with its count and time); absent for other engines
   */
  runs?: TemplateRunRecord[]
}

export interface TemplatesData {
  renders: TemplateRender[]
  /** milliseconds spent rendering (the ended renders) */
  totalMs: number
}

declare module '../../../kernel/collector.js' {
  interface CollectedData {
    templates: TemplatesData
  }
}

const MAX_NAME = 500

function runRecords (runs: readonly TemplateRun[]): TemplateRunRecord[] {
  return runs.map((run) => ({ name: truncate(String(run.name), MAX_NAME), kind: run.kind, count: run.count, ms: roundMs(run.ms), children: runRecords(run.children) }))
}

/** A render's runs as table rows, each indented under what included it. */
function runRows (runs: readonly TemplateRunRecord[], depth = 0, out: object[] = []): object[] {
  for (const run of runs) {
    out.push({ ...run, depth: Math.min(depth, 8), isPartial: run.kind === 'partial' })
    runRows(run.children, depth + 1, out)
  }
  return out
}

/** Every template of the renders with its runs and time, across renders (a partial's runs added up wherever it was included). */
function templatesUsed (renders: readonly TemplateRender[]): Array<{ template: string, kind: string, count: number, ms: number }> {
  const used = new Map<string, { template: string, kind: string, count: number, ms: number }>()
  const add = (template: string, kind: string, count: number, ms: number): void => {
    const key = `${kind}\u0000${template}`
    let entry = used.get(key)
    if (entry === undefined) used.set(key, entry = { template, kind, count: 0, ms: 0 })
    entry.count += count
    entry.ms = roundMs(entry.ms + ms)
  }
  const walk = (runs: readonly TemplateRunRecord[]): void => {
    for (const run of runs) {
      add(run.name, run.kind, run.count, run.ms)
      walk(run.children)
    }
  }
  for (const render of renders) {
    if (render.runs !== undefined && render.runs.length > 0) {
      walk(render.runs)
      continue
    }
    // an engine whose runs are not seen: the call's template, and its layout (its time is the call's)
    add(render.template, 'page', 1, render.duration ?? 0)
    if (render.layout !== undefined) add(render.layout, 'layout', 1, 0)
  }
  return [...used.values()]
}

/**
 * The templates panel (Symfony's Twig panel): every render of the app's @fastify/view during
 * the request — template, layout, duration — and the templates rendered, with their counts.
 * The kernel's own pages are not the app's renders and are never recorded. The toolbar item
 * counts the renders and their time, highlighted above `slowMs`.
 */
export function templatesCollector (slowMs: number): Collector<TemplatesData> {
  return {
    name: 'templates',
    kinds: 'all',
    label: 'Templates',
    order: 90,
    deferred: true,
    template: 'profiler/collectors/templates.hbs',
    masked: true,
    schema: {
      type: 'object',
      required: ['renders', 'totalMs'],
      properties: {
        totalMs: { type: 'number' },
        renders: { type: 'array', items: { type: 'object', required: ['template', 'start'], properties: { template: { type: 'string' }, start: { type: 'number' }, duration: { type: ['number', 'null'] } } } }
      }
    },
    collect ({ context }) {
      const spans = recordingOf(context)?.spans.spans
      if (spans === undefined) return undefined
      const renders: TemplateRender[] = []
      let totalMs = 0
      for (const span of spans) {
        if (span.kind !== 'template') continue
        const render: TemplateRender = { template: truncate(span.name, MAX_NAME), start: roundMs(span.start), duration: span.duration === null ? null : roundMs(span.duration) }
        if (typeof span.data.layout === 'string') render.layout = truncate(span.data.layout, MAX_NAME)
        if (span.error !== undefined) render.error = truncate(span.error, 2000)
        if (span.origin !== undefined) render.origin = span.origin
        if (Array.isArray(span.data.tree) && span.data.tree.length > 0) render.runs = runRecords(span.data.tree as TemplateRun[])
        totalMs += span.duration ?? 0
        renders.push(render)
      }
      return renders.length === 0 ? undefined : { renders, totalMs: roundMs(totalMs) }
    },
    panel (data) {
      const templates = templatesUsed(data.renders)
      return {
        count: data.renders.length,
        totalMs: data.totalMs,
        failed: data.renders.filter((r) => r.error !== undefined).length,
        partials: templates.filter((t) => t.kind === 'partial').reduce((sum, t) => sum + t.count, 0),
        templates,
        renders: data.renders.map((render, index) => ({ ...render, index: index + 1, running: render.duration === null, rows: runRows(render.runs ?? []) }))
      }
    },
    badge (data) {
      const failed = data.renders.some((r) => r.error !== undefined)
      return { text: String(data.renders.length), kind: failed ? 'error' : data.totalMs > slowMs ? 'warning' : 'info' }
    },
    toolbar (data) {
      if (data === undefined) return undefined
      return { count: data.renders.length, totalMs: data.totalMs.toFixed(1), slow: data.totalMs > slowMs, slowMs, failed: data.renders.filter((r) => r.error !== undefined).length }
    }
  }
}
