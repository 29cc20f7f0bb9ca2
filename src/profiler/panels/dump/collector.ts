import type { Collector } from '../../../kernel/collector.js'
import type { OriginResolver } from '../../origin.js'
import { truncate } from '../../../http/redact.js'
import { roundMs } from '../../panel-kit/calls.js'
import { DUMP_LIMITS } from './dump-bound.js'

/** One `dump()` as the panel shows it. */
export interface DumpEntry {
  label?: string
  /** `node:util` inspect's text of the value, at the call */
  text: string
  /** milliseconds from the start of the unit */
  at: number
  /** where it was called: the source file (relative to the project), its line, an editor link */
  file?: string
  line?: number
  link?: string
  /** entries of the value dumped, within the dump's bounds (DUMP_LIMITS) */
  items?: number
  /** entries the bounds left out */
  cut?: number
}

export interface DumpData {
  dumps: DumpEntry[]
  /** dumps beyond the bound (100 a unit): counted, not kept */
  dropped: number
}

declare module '../../../kernel/collector.js' {
  interface CollectedData {
    dump: DumpData
  }
}

const TOOLBAR_DUMPS = 10
const PREVIEW = 80

/**
 * The dump panel (Symfony's "Dump"): each `dump(value, label?)` of the unit, its text and
 * where it was called (source-mapped), counted on the toolbar. Dumps are shown as the app
 * dumped them: masking is for what the profiler records by itself, a dump is the developer's
 * explicit choice (as in Symfony).
 */
export function dumpCollector (origins: OriginResolver): Collector<DumpData> {
  return {
    name: 'dump',
    kinds: 'all',
    label: 'Dumps',
    order: 95,
    deferred: true,
    template: 'profiler/collectors/dump.hbs',
    masked: true,
    schema: {
      type: 'object',
      required: ['dumps', 'dropped'],
      properties: {
        dropped: { type: 'number' },
        dumps: { type: 'array', items: { type: 'object', required: ['text', 'at'], properties: { text: { type: 'string' }, at: { type: 'number' }, label: { type: 'string' }, file: { type: 'string' }, line: { type: 'number' }, items: { type: 'number' }, cut: { type: 'number' } } } }
      }
    },
    collect ({ context }) {
      const recorded = context.get('dumps')
      if (recorded === undefined) return undefined
      return {
        dropped: recorded.dropped,
        dumps: recorded.dumps.map((dumped) => {
          const entry: DumpEntry = { text: dumped.text, at: roundMs(dumped.at) }
          if (dumped.label !== undefined) entry.label = truncate(dumped.label, 200)
          if (dumped.items !== undefined) entry.items = dumped.items
          if (dumped.cut !== undefined) entry.cut = dumped.cut
          // the app's frame that called it (a dump in a helper of a dependency's: the app's call below)
          const origin = dumped.origin ?? origins.resolve(dumped.stack)
          if (origin !== undefined) {
            entry.file = origin.file
            entry.line = origin.line
            if (origin.link !== undefined) entry.link = origin.link
          }
          return entry
        })
      }
    },
    panel (data) {
      return { count: data.dumps.length, dropped: data.dropped, limits: DUMP_LIMITS, dumps: data.dumps.map((d, index) => ({ ...d, index: index + 1 })) }
    },
    badge (data) {
      return { text: String(data.dumps.length + data.dropped), kind: 'info' }
    },
    toolbar (data) {
      if (data === undefined) return undefined
      return {
        count: data.dumps.length + data.dropped,
        more: Math.max(0, data.dumps.length - TOOLBAR_DUMPS) + data.dropped,
        dumps: data.dumps.slice(0, TOOLBAR_DUMPS).map((d) => ({ where: d.file === undefined ? '' : `${d.file}:${d.line ?? ''}`, label: d.label, preview: truncate(d.text.replace(/\s+/g, ' '), PREVIEW) }))
      }
    }
  }
}
