import { format } from 'node:util'
import type { Collector } from '../../../kernel/collector.js'
import type { Redactor } from '../../../http/redact.js'
import { truncate } from '../../../http/redact.js'
import { PROFILER_PATH, recordingOf } from '../../recording.js'
import { LEVEL_NAMES, settledLogValue } from '../../log-capture.js'
import type { CapturedLogs } from '../../log-capture.js'

/** One log record of the unit, as the logs panel shows it. */
export interface LogRecord {
  level: number
  levelName: string
  /** milliseconds since the unit started */
  offset: number
  message: string
  context: unknown
}

declare module '../../../kernel/collector.js' {
  interface CollectedData {
    logs: LogRecord[]
  }
}

/** What Fastify's own serializers keep of a request or reply in a log call, its URL masked. */
function summarizeLogValue (key: string, value: unknown, redactor: Redactor): unknown {
  const kept = settledLogValue(key, value)
  if ((key === 'req' || key === 'request') && typeof kept === 'object' && kept !== null && typeof (kept as { url?: unknown }).url === 'string') {
    return { ...kept, url: redactor.url((kept as { url: string }).url) }
  }
  return kept
}

/** Turns captured calls into records: pino's `(obj?, msg?, ...args)` read as pino reads it. */
export function formatLogs (captured: CapturedLogs | undefined, startOffset: number, redactor: Redactor): LogRecord[] {
  if (captured === undefined) return []
  const records: LogRecord[] = captured.calls.map(({ level, offset, args }) => {
    let context: unknown = null
    let message = ''
    const [first, ...rest] = args
    if (first instanceof Error) {
      context = { err: redactor.value(first) }
      message = rest.length > 0 ? format(...rest) : first.message
    } else if (typeof first === 'object' && first !== null) {
      const fields: Record<string, unknown> = {}
      for (const [key, value] of Object.entries(first)) fields[key] = summarizeLogValue(key, value, redactor)
      context = redactor.value(fields)
      const msg = (first as { msg?: unknown }).msg
      message = rest.length > 0 ? format(...rest) : typeof msg === 'string' ? msg : ''
    } else {
      message = args.length > 0 ? format(...args) : ''
    }
    return { level, levelName: LEVEL_NAMES.get(level) ?? String(level), offset: Math.round((offset + startOffset) * 1000) / 1000, message: truncate(redactor.message(message)), context }
  })
  if (captured.dropped > 0) {
    records.push({ level: 40, levelName: 'warn', offset: records.at(-1)?.offset ?? 0, message: `${captured.dropped} more log records were not kept`, context: null })
  }
  return records
}

function counts (records: readonly LogRecord[]): { errors: number, warnings: number } {
  let errors = 0
  let warnings = 0
  for (const record of records) {
    if (record.level >= 50) errors++
    else if (record.level === 40) warnings++
  }
  return { errors, warnings }
}

/** The logs panel (Symfony's "logger"): the unit's pino records, and the toolbar's logs item. */
export const logsCollector: Collector<LogRecord[]> = {
  name: 'logs',
  kinds: 'all',
  label: 'Logs',
  order: 40,
  deferred: true,
  aliases: ['logger'],
  template: 'profiler/collectors/logs.hbs',
  masked: true,
  schema: { type: 'array', items: { type: 'object', required: ['level', 'levelName', 'offset', 'message'], properties: { level: { type: 'number' }, levelName: { type: 'string' }, offset: { type: 'number' }, message: { type: 'string' } } } },
  collect ({ context, redactor }) {
    const recording = recordingOf(context)
    if (recording === undefined) return []
    return formatLogs(recording.logs, recording.logs === undefined ? 0 : recording.logs.origin - context.startedAt, redactor)
  },
  panel (records) {
    const byLevel = new Map<string, number>()
    for (const record of records) byLevel.set(record.levelName, (byLevel.get(record.levelName) ?? 0) + 1)
    return {
      empty: records.length === 0,
      counts: [...byLevel].map(([level, count]) => ({ level, count })),
      records: records.map((record) => ({
        ...record,
        levelClass: record.level >= 50 ? 'error' : record.level === 40 ? 'warning' : record.level <= 20 ? 'debug' : 'info',
        context: record.context === null || record.context === undefined || (typeof record.context === 'object' && Object.keys(record.context as object).length === 0) ? '' : JSON.stringify(record.context, null, 2)
      }))
    }
  },
  badge (records) {
    const { errors, warnings } = counts(records)
    if (errors > 0) return { text: String(errors), kind: 'error' }
    if (warnings > 0) return { text: String(warnings), kind: 'warning' }
    return records.length > 0 ? { text: String(records.length), kind: 'info' } : undefined
  },
  toolbar (records, profile) {
    if (records === undefined) return undefined
    const { errors, warnings } = counts(records)
    return {
      total: records.length,
      errors,
      warnings,
      // the figure on the bar: errors if any, else warnings, else every record
      shown: errors > 0 ? errors : warnings > 0 ? warnings : records.length,
      kind: errors > 0 ? 'error' : warnings > 0 ? 'warning' : null,
      link: `${PROFILER_PATH}/${profile.token}?panel=logs`
    }
  }
}
