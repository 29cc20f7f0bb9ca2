import type { Collector } from '../../../kernel/collector.js'
import { CACHE } from './capture.js'
import type { CacheSpanData } from './capture.js'
import type { TimedCall } from '../../panel-kit/calls.js'
import { rowClass, spansOfKind, timing, totals } from '../../panel-kit/calls.js'
import { N_PLUS_ONE } from '../../panel-kit/repeats.js'
import { keyShape, repeatedShapes } from '../../panel-kit/repeats.js'
import type { Repeated } from '../../panel-kit/repeats.js'

/** One Redis command of the unit. */
export interface CacheCommandRecord extends TimedCall, CacheSpanData {}

export interface CacheData {
  commands: CacheCommandRecord[]
}

declare module '../../../kernel/collector.js' {
  interface CollectedData {
    cache: CacheData
  }
}

/** A command's shape: its name and its keys with their ids taken out (`GET book:{id}`). */
export function commandShape (command: CacheCommandRecord): string {
  return [command.command, ...command.keys.map(keyShape)].join(' ')
}

export const variant = (command: CacheCommandRecord): string => [command.command, ...command.keys, ...command.args].join(' ')

/** Reads, hits and misses of a list of commands, and the hit ratio (a percentage; null without reads). */
export function readFigures (commands: readonly CacheCommandRecord[]): { reads: number, hits: number, misses: number, hitRatio: number | null } {
  let reads = 0
  let hits = 0
  let misses = 0
  for (const command of commands) {
    if (command.hits === undefined) continue
    reads++
    hits += command.hits
    misses += command.misses ?? 0
  }
  return { reads, hits, misses, hitRatio: hits + misses === 0 ? null : Math.round((hits / (hits + misses)) * 100) }
}

export interface Analysis {
  app: CacheCommandRecord[]
  kernel: CacheCommandRecord[]
  /** the libraries' own (BullMQ's scripts and reads) */
  libraries: CacheCommandRecord[]
  repeated: Repeated[]
}

/** The app's commands (the kernel's and the libraries' own are apart) and the shapes it repeated: a likely N+1. */
export function analyse (data: CacheData): Analysis {
  const app: CacheCommandRecord[] = []
  const kernel: CacheCommandRecord[] = []
  const libraries: CacheCommandRecord[] = []
  for (const command of data.commands) (command.kernel === true ? kernel : command.library !== undefined ? libraries : app).push(command)
  // a transaction is one row whatever it holds: no shape to compare
  const shaped = app.filter((command) => command.command !== 'MULTI')
  return { app, kernel, libraries, repeated: repeatedShapes(shaped, commandShape, variant, N_PLUS_ONE) }
}

function rows (commands: readonly CacheCommandRecord[], repeated: ReadonlyMap<string, Repeated>): object[] {
  return commands.map((command, index) => ({
    ...command,
    number: index + 1,
    rowClass: rowClass(command),
    isRunning: command.duration === null,
    keys: command.keys.join(' '),
    args: command.args.join(' '),
    read: command.hits === undefined ? null : command.misses === 0 ? 'hit' : command.hits === 0 ? 'miss' : `${command.hits} hit${command.hits === 1 ? '' : 's'}, ${command.misses ?? 0} miss${command.misses === 1 ? '' : 'es'}`,
    missed: command.hits !== undefined && command.hits === 0,
    repeated: repeated.get(commandShape(command))?.count
  }))
}

/**
 * The Cache panel (Django Debug Toolbar's Cache panel, Telescope's Redis watcher): every Redis
 * command of the unit (ioredis, node-redis) with its keys, time, failure, where the app sent
 * it, and for a read whether it found what it asked for (hits and misses, the hit ratio on the
 * toolbar item). One command shape repeated 3 times or more (`GET book:{id}`: a read per item
 * of a list) is flagged as a likely N+1, as the Database panel flags statements. The kernel's
 * own commands (sessions, login throttling, profile storage), and those a library sends for
 * itself (BullMQ's Lua scripts and reads, when the app adds a job), are listed apart and left
 * out of every figure, so that the figures are the app's.
 */
export function cacheCollector (thresholdMs: number): Collector<CacheData> {
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
          if (typeof data.hits === 'number') {
            record.hits = data.hits
            record.misses = data.misses ?? 0
          }
          if (data.kernel === true || typeof data.library === 'string') {
            if (data.kernel === true) record.kernel = true
            else record.library = data.library
            if (data.purpose !== undefined) record.purpose = data.purpose
          }
          return record
        })
      }
    },
    panel (data) {
      const { app, kernel, libraries, repeated } = analyse(data)
      const byShape = new Map(repeated.map((entry) => [entry.shape, entry]))
      const kernelTotals = totals(kernel)
      const libraryTotals = totals(libraries)
      return {
        libraryCommands: rows(libraries, new Map()),
        libraryCount: libraryTotals.count,
        libraryMs: libraryTotals.totalMs,
        libraryNames: [...new Set(libraries.map((command) => command.library))].join(', '),
        ...totals(app),
        ...readFigures(app),
        nPlusOne: repeated,
        commands: rows(app, byShape),
        kernelCommands: rows(kernel, new Map()),
        kernelCount: kernelTotals.count,
        kernelMs: kernelTotals.totalMs
      }
    },
    badge (data) {
      const { app, repeated } = analyse(data)
      const sums = totals(app)
      if (sums.errors > 0) return { text: String(sums.errors), kind: 'error' }
      if (repeated.length > 0) return { text: `${sums.count} (N+1)`, kind: 'warning' }
      return sums.count > 0 ? { text: String(sums.count), kind: 'info' } : undefined
    },
    toolbar (data) {
      if (data === undefined) return undefined
      const { app, kernel, libraries, repeated } = analyse(data)
      const sums = totals(app)
      if (sums.count === 0) return undefined
      const reads = readFigures(app)
      return {
        ...sums,
        ...reads,
        totalMs: sums.totalMs.toFixed(1),
        thresholdMs,
        nPlusOne: repeated.length,
        kernelCount: kernel.length,
        libraryCount: libraries.length,
        highlight: sums.errors > 0 ? 'error' : sums.totalMs > thresholdMs || repeated.length > 0 ? 'warning' : null
      }
    },
    figures (data) {
      return { nPlusOne: analyse(data).repeated.length > 0 }
    }
  }
}
