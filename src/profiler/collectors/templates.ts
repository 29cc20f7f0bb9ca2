import type { Collector } from '../../kernel/collector.js'
import { truncate } from '../../http/redact.js'
import { recordingOf } from '../recording.js'
import { roundMs } from './events.js'

/** One render through the app's @fastify/view. */
export interface TemplateRender {
  template: string
  layout?: string
  /** milliseconds from the start of the request */
  start: number
  /** null: still rendering when the response was sent */
  duration: number | null
  error?: string
}

export interface TemplatesData {
  renders: TemplateRender[]
  /** milliseconds spent rendering (the ended renders) */
  totalMs: number
}

declare module '../../kernel/collector.js' {
  interface CollectedData {
    templates: TemplatesData
  }
}

const MAX_NAME = 500

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
        totalMs += span.duration ?? 0
        renders.push(render)
      }
      return renders.length === 0 ? undefined : { renders, totalMs: roundMs(totalMs) }
    },
    panel (data) {
      const byTemplate = new Map<string, { template: string, count: number, ms: number }>()
      for (const render of data.renders) {
        for (const template of render.layout === undefined ? [render.template] : [render.template, render.layout]) {
          let entry = byTemplate.get(template)
          if (entry === undefined) byTemplate.set(template, entry = { template, count: 0, ms: 0 })
          entry.count++
          // a layout's time is its render call's: counted once, on the template
          if (template === render.template) entry.ms += render.duration ?? 0
        }
      }
      return {
        count: data.renders.length,
        totalMs: data.totalMs,
        failed: data.renders.filter((r) => r.error !== undefined).length,
        templates: [...byTemplate.values()],
        renders: data.renders.map((render, index) => ({ ...render, index: index + 1, running: render.duration === null }))
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
