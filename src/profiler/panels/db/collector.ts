import type { Collector } from '../../../kernel/collector.js'
import { PROFILER_PATH } from '../../recording.js'
import { DB } from './capture.js'
import type { DbSpanData } from './capture.js'
import type { TimedCall } from '../../panel-kit/calls.js'
import { N_PLUS_ONE } from '../../panel-kit/repeats.js'
import { ioToolbar, rowClass, spansOfKind, timing, totals } from '../../panel-kit/calls.js'

/** One SQL statement of the unit. */
export interface DbStatementRecord extends TimedCall, DbSpanData {}

export interface DbData {
  statements: DbStatementRecord[]
}

declare module '../../../kernel/collector.js' {
  interface CollectedData {
    db: DbData
  }
}

export interface DbThresholds {
  /** the panel's total time above which its toolbar item is highlighted (ms) */
  totalMs: number
  /** a statement this slow or slower is highlighted (ms) */
  slowMs: number
}

export interface Group {
  statement: string
  count: number
  totalMs: number
  /** the parameter sets seen */
  variants: Set<string>
  /** its statements' numbers in the panel (1-based) */
  numbers: number[]
}

/** This many executions of a group are listed with their parameters, then counted. */
const MAX_EXECUTIONS = 50

function group (statements: readonly DbStatementRecord[], key: (statement: DbStatementRecord) => string): Map<string, Group> {
  const groups = new Map<string, Group>()
  for (const [index, statement] of statements.entries()) {
    const name = key(statement)
    let entry = groups.get(name)
    if (entry === undefined) {
      entry = { statement: statement.statement, count: 0, totalMs: 0, variants: new Set(), numbers: [] }
      groups.set(name, entry)
    }
    entry.count++
    entry.numbers.push(index + 1)
    entry.totalMs += statement.duration ?? 0
    entry.variants.add(`${statement.statement}\u0000${JSON.stringify(statement.params ?? null)}`)
  }
  return groups
}

const identical = (statement: DbStatementRecord): string => `${statement.statement}\u0000${JSON.stringify(statement.params ?? null)}`
export const similar = (statement: DbStatementRecord): string => statement.shape ?? statement.statement

/** What the panel, the badge and the toolbar say of the app's statements (the kernel's are apart). */
export function analyse (data: DbData): { app: DbStatementRecord[], kernel: DbStatementRecord[], duplicates: Map<string, Group>, nPlusOne: Map<string, Group> } {
  const app = data.statements.filter((statement) => statement.kernel !== true)
  const kernel = data.statements.filter((statement) => statement.kernel === true)
  const duplicates = new Map([...group(app, identical)].filter(([, entry]) => entry.count > 1))
  const nPlusOne = new Map([...group(app, similar)].filter(([, entry]) => entry.count >= N_PLUS_ONE && entry.variants.size > 1))
  return { app, kernel, duplicates, nPlusOne }
}

/**
 * What differs between the executions of one shape (the N+1 group): each one's parameters, or,
 * when the driver wrote its values into the statement (mysql2's query(), Sequelize), the
 * statement itself.
 */
function executions (entry: Group, statements: readonly DbStatementRecord[]): object[] {
  const listed: Array<{ number: number | null, params: string | null, statement: string | null }> = entry.numbers.slice(0, MAX_EXECUTIONS).map((number) => {
    const statement = statements[number - 1]!
    return {
      number,
      params: statement.params === undefined ? null : JSON.stringify(statement.params),
      statement: statement.statement === entry.statement && statement.params !== undefined ? null : statement.statement
    }
  })
  if (entry.numbers.length > MAX_EXECUTIONS) listed.push({ number: null, params: `… ${entry.numbers.length - MAX_EXECUTIONS} more`, statement: null })
  return listed
}

function rows (statements: readonly DbStatementRecord[], slowMs: number, duplicates: Map<string, Group>, nPlusOne: Map<string, Group>, token?: string): object[] {
  return statements.map((statement, index) => ({
    ...statement,
    // what the Copy button copies: the runnable form, or the statement when it has no values of its own
    copy: statement.runnable ?? statement.statement,
    explainAction: statement.explain === undefined || token === undefined ? undefined : `${PROFILER_PATH}/${token}/explain/${encodeURIComponent(statement.explain)}`,
    number: index + 1,
    rowClass: rowClass(statement, slowMs),
    isRunning: statement.duration === null,
    slow: statement.duration !== null && statement.duration >= slowMs,
    params: statement.params === undefined ? '' : JSON.stringify(statement.params),
    duplicates: duplicates.get(identical(statement))?.count,
    similar: nPlusOne.get(similar(statement))?.count
  }))
}

/**
 * The Database panel (Symfony's Doctrine panel, Django Debug Toolbar's SQL panel): every
 * statement of the unit with its parameters, time, rows and failure; identical statements
 * grouped with their count, a shape repeated with different parameters flagged as a likely
 * N+1, slow statements highlighted. The kernel's own statements (a session store's) are shown
 * apart and not counted on the toolbar.
 */
export function dbCollector (thresholds: DbThresholds): Collector<DbData> {
  return {
    name: DB,
    kinds: 'all',
    label: 'Database',
    order: 45,
    deferred: true,
    template: 'profiler/collectors/db.hbs',
    // the spans were masked when the profile was built (their formatter)
    masked: true,
    schema: {
      type: 'object',
      required: ['statements'],
      properties: { statements: { type: 'array', items: { type: 'object', required: ['statement', 'start'], properties: { statement: { type: 'string' }, start: { type: 'number' } } } } }
    },
    collect ({ context }) {
      return {
        statements: spansOfKind(context, DB).map((span) => {
          const data = span.data as Partial<DbSpanData>
          const record = Object.assign(timing(span), data) as DbStatementRecord
          record.system = String(data.system ?? 'sql')
          record.statement = String(data.statement ?? span.name)
          return record
        })
      }
    },
    panel (data, profile) {
      const { app, kernel, duplicates, nPlusOne } = analyse(data)
      const sums = totals(app)
      return {
        ...sums,
        slowMs: thresholds.slowMs,
        slowCount: app.filter((statement) => statement.duration !== null && statement.duration >= thresholds.slowMs).length,
        statements: rows(app, thresholds.slowMs, duplicates, nPlusOne, profile?.token),
        kernelStatements: rows(kernel, thresholds.slowMs, new Map(), new Map()),
        nPlusOne: [...nPlusOne.values()].map((entry) => ({ statement: entry.statement, count: entry.count, variants: entry.variants.size, totalMs: entry.totalMs, executions: executions(entry, app) })),
        // by shape, as Doctrine's "group similar statements": one row per statement with its count
        groups: [...group(app, similar).entries()]
          .sort(([, a], [, b]) => b.totalMs - a.totalMs || b.count - a.count)
          .map(([shape, entry]) => ({
            // the statement itself when its text never changed, else its shape (values taken out)
            statement: entry.numbers.every((number) => app[number - 1]!.statement === entry.statement) ? entry.statement : shape,
            count: entry.count,
            variants: entry.variants.size,
            totalMs: entry.totalMs,
            repeated: entry.count > 1
          }))
      }
    },
    badge (data) {
      const { app, nPlusOne } = analyse(data)
      const sums = totals(app)
      // the statements' count, as the toolbar says it: red when one failed
      if (sums.errors > 0) return { text: String(sums.count), kind: 'error' }
      if (nPlusOne.size > 0) return { text: `${sums.count} (N+1)`, kind: 'warning' }
      return sums.count > 0 ? { text: String(sums.count), kind: 'info' } : undefined
    },
    toolbar (data) {
      if (data === undefined) return undefined
      const { app, kernel, nPlusOne } = analyse(data)
      const model = ioToolbar(totals(app), thresholds.totalMs, { nPlusOne: nPlusOne.size, kernelCount: kernel.length }) as { highlight: string | null } | undefined
      if (model !== undefined && model.highlight === null && nPlusOne.size > 0) model.highlight = 'warning'
      return model
    },
    // the search page's figures: the app's statements, and whether one shape looked like an N+1
    figures (data) {
      const { app, nPlusOne } = analyse(data)
      return { statements: app.length, nPlusOne: nPlusOne.size > 0 }
    }
  }
}
