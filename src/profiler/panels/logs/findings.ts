import type { Finding, PanelReader } from '../../findings.js'
import type { LogRecord } from './collector.js'

/** Distinct messages triage lists per level. */
const LISTED = 10

/** Records of one level and up, grouped by message: each message once, with its count. */
function grouped (records: readonly LogRecord[], keep: (record: LogRecord) => boolean): Array<{ message: string, count: number, level: string }> {
  const groups = new Map<string, { message: string, count: number, level: string }>()
  for (const record of records) {
    if (!keep(record)) continue
    const entry = groups.get(record.message)
    if (entry === undefined) groups.set(record.message, { message: record.message, count: 1, level: record.levelName })
    else entry.count++
  }
  return [...groups.values()]
}

/**
 * What the Logs panel tells agents and scripts: the flag (error logs), triage's findings (each
 * error and warning message, with how many times it was logged) and a comparison's figures.
 */
export const logsReader: PanelReader<LogRecord[]> = {
  panel: 'logs',
  flags (records) {
    return records.some((record) => record.level >= 50) ? ['error_logs'] : []
  },
  findings (records) {
    const findings: Finding[] = []
    for (const group of grouped(records, (record) => record.level >= 50).slice(0, LISTED)) {
      findings.push({ kind: 'error_log', panel: 'logs', severity: 'error', title: `A log record of level ${group.level}${group.count > 1 ? `, ${group.count} times` : ''}`, advice: 'The app logged a failure: the Logs panel has the record\'s context (its error, its fields).', count: group.count, data: group.message })
    }
    for (const group of grouped(records, (record) => record.level === 40).slice(0, LISTED)) {
      findings.push({ kind: 'warning_log', panel: 'logs', severity: 'warning', title: `A warning log record${group.count > 1 ? `, ${group.count} times` : ''}`, advice: 'The app or a library warned: the Logs panel has the record\'s context.', count: group.count, data: group.message })
    }
    return findings
  },
  figures (records) {
    return { label: 'Logs', measures: { records: records.length, errors: records.filter((r) => r.level >= 50).length, warnings: records.filter((r) => r.level === 40).length } }
  }
}
