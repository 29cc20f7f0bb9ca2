import type { Finding, PanelReader } from '../../findings.js'
import { commonOrigin, ms, originOf } from '../../findings.js'
import type { DbData } from './collector.js'
import { analyse, similar } from './collector.js'
import { DB } from './capture.js'

/** Slow statements triage lists, slowest first. */
const SLOW_LISTED = 5

/**
 * What the Database panel tells agents and scripts: the flags (likely N+1, slow and failed
 * statements), triage's findings (each N+1 group with its count, time and the line of the app
 * that ran it; the slowest statements; failures; statements run twice with the same values) and
 * the figures a comparison puts side by side (statements, time, shapes). The app's statements
 * only: the kernel's own (a session store's) are left out, as on the toolbar.
 */
export function dbReader (slowMs: number): PanelReader<DbData> {
  const slow = (duration: number | null): boolean => duration !== null && duration >= slowMs
  return {
    panel: DB,
    flags (data) {
      const { app, nPlusOne } = analyse(data)
      const flags: string[] = []
      if (nPlusOne.size > 0) flags.push('n_plus_one')
      if (app.some((statement) => slow(statement.duration))) flags.push('slow_statements')
      if (app.some((statement) => statement.error !== undefined)) flags.push('failed_calls')
      return flags
    },
    findings (data) {
      const { app, duplicates, nPlusOne } = analyse(data)
      const findings: Finding[] = []
      for (const [shape, group] of nPlusOne) {
        findings.push({
          kind: 'n_plus_one',
          panel: DB,
          severity: 'warning',
          title: `Likely N+1: ${group.count} SQL statements of one shape, ${group.variants.size} sets of values`,
          advice: 'One statement runs per item of a list: fetch them all at once (a JOIN, WHERE … IN (…), or the ORM\'s eager loading) where the loop at the origin runs it.',
          count: group.count,
          timeMs: ms(group.totalMs),
          origin: commonOrigin(group.numbers.map((number) => app[number - 1]?.origin)),
          data: shape
        })
      }
      for (const statement of app.filter((s) => s.error !== undefined)) {
        findings.push({ kind: 'failed_call', panel: DB, severity: 'error', title: 'A SQL statement failed', advice: 'Read the database\'s message (before the statement in `data`); the origin is the app\'s line that ran it.', count: 1, timeMs: statement.duration ?? undefined, origin: originOf(statement.origin), data: `${statement.error ?? ''} | ${statement.statement}` })
      }
      const slowest = app.filter((statement) => slow(statement.duration) && !nPlusOne.has(similar(statement))).sort((a, b) => (b.duration ?? 0) - (a.duration ?? 0)).slice(0, SLOW_LISTED)
      for (const statement of slowest) {
        findings.push({ kind: 'slow_statement', panel: DB, severity: 'warning', title: `Slow SQL statement: ${statement.duration!.toFixed(1)} ms (threshold ${slowMs} ms)`, advice: 'EXPLAIN it (the Database panel\'s EXPLAIN button): an index missing on its WHERE or JOIN columns, or too many rows read.', count: 1, timeMs: statement.duration!, origin: originOf(statement.origin), data: statement.statement })
      }
      for (const group of duplicates.values()) {
        if (nPlusOne.has(similar(app[group.numbers[0]! - 1]!))) continue
        findings.push({ kind: 'duplicate_statements', panel: DB, severity: 'info', title: `The same SQL statement with the same values ran ${group.count} times`, advice: 'Keep the first result (in a variable, or the request\'s cache) instead of asking again.', count: group.count, timeMs: ms(group.totalMs), origin: commonOrigin(group.numbers.map((number) => app[number - 1]?.origin)), data: group.statement })
      }
      return findings
    },
    figures (data) {
      const { app, nPlusOne } = analyse(data)
      const shapes: Record<string, number> = {}
      let timeMs = 0
      for (const statement of app) {
        const shape = similar(statement)
        shapes[shape] = (shapes[shape] ?? 0) + 1
        timeMs += statement.duration ?? 0
      }
      return { label: 'Database', measures: { statements: app.length, timeMs: ms(timeMs), failed: app.filter((s) => s.error !== undefined).length }, shapes, nPlusOne: [...nPlusOne.keys()] }
    }
  }
}
