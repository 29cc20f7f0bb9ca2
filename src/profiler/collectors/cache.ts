import type { Collector } from '../../kernel/collector.js'
import { CACHE } from '../io/cache.js'
import type { CacheSpanData } from '../io/cache.js'
import type { TimedCall } from './io.js'
import { ioBadge, ioToolbar, rowClass, spansOfKind, timing, totals } from './io.js'

/** One Redis command of the request. */
export interface CacheCommandRecord extends TimedCall, CacheSpanData {}

export interface CacheData {
  commands: CacheCommandRecord[]
}

declare module '../../kernel/collector.js' {
  interface CollectedData {
    cache: CacheData
  }
}

function rows (commands: readonly CacheCommandRecord[]): object[] {
  return commands.map((command, index) => ({
    ...command,
    number: index + 1,
    rowClass: rowClass(command),
    isRunning: command.duration === null,
    keys: command.keys.join(' '),
    args: command.args.join(' ')
  }))
}

/**
 * The Cache panel: every Redis command of the request (ioredis, node-redis) with its keys,
 * time and failure. The kernel's own commands (sessions, login throttling, profile storage) are
 * listed apart and left out of the counts, so that the figures are the app's.
 */
export function cacheCollector (thresholdMs: number): Collector<CacheData> {
  const split = (data: CacheData): { app: CacheCommandRecord[], kernel: CacheCommandRecord[] } => ({
    app: data.commands.filter((command) => command.kernel !== true),
    kernel: data.commands.filter((command) => command.kernel === true)
  })
  return {
    name: CACHE,
    kinds: 'all',
    label: 'Cache',
    order: 46,
    deferred: true,
    template: 'profiler/collectors/cache.hbs',
    // the spans were masked when the profile was built (their formatter)
    masked: true,
    schema: {
      type: 'object',
      required: ['commands'],
      properties: { commands: { type: 'array', items: { type: 'object', required: ['command', 'keys', 'start'], properties: { command: { type: 'string' }, keys: { type: 'array' }, start: { type: 'number' } } } } }
    },
    collect ({ context }) {
      return {
        commands: spansOfKind(context, CACHE).map((span) => {
          const data = span.data as Partial<CacheSpanData>
          // field by field, no spread: a profile may hold a thousand of them
          const record = timing(span) as CacheCommandRecord
          record.command = String(data.command ?? span.name)
          record.keys = Array.isArray(data.keys) ? data.keys : []
          record.args = Array.isArray(data.args) ? data.args : []
          record.client = String(data.client ?? 'unknown')
          if (typeof data.database === 'number') record.database = data.database
          if (data.kernel === true) {
            record.kernel = true
            if (data.purpose !== undefined) record.purpose = data.purpose
          }
          return record
        })
      }
    },
    panel (data) {
      const { app, kernel } = split(data)
      const kernelTotals = totals(kernel)
      return { ...totals(app), commands: rows(app), kernelCommands: rows(kernel), kernelCount: kernelTotals.count, kernelMs: kernelTotals.totalMs }
    },
    badge (data) {
      return ioBadge(totals(split(data).app))
    },
    toolbar (data) {
      if (data === undefined) return undefined
      const { app, kernel } = split(data)
      return ioToolbar(totals(app), thresholdMs, { kernelCount: kernel.length })
    }
  }
}
