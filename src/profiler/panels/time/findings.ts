import type { Finding, FindingOrigin, PanelReader } from '../../findings.js'
import type { TimeData } from './collector.js'

/** The spans triage lists, slowest first (those of a millisecond and a twentieth of the whole at least). */
const SLOWEST = 5
/** Rows of the kernel's own making: what the request did is the spans. */
const KERNEL_ROWS = new Set(['stage', 'listener', 'controller'])

/** `src/routes/books.ts:42` as the timeline keeps an origin. */
function parsedOrigin (text: string | undefined): FindingOrigin | undefined {
  const match = text === undefined ? null : /^(.*):(\d+)$/.exec(text)
  return match === null ? undefined : { file: match[1]!, line: Number(match[2]) }
}

/**
 * What the Timeline tells agents and scripts: triage's slow request and slowest spans (what the
 * request spent its time on, with the app's line for each), and a comparison's total time and
 * memory.
 */
export function timeReader (slowMs: number): PanelReader<TimeData> {
  return {
    panel: 'time',
    findings (data) {
      const findings: Finding[] = []
      if (data.totalMs > slowMs) {
        findings.push({ kind: 'slow_request', panel: 'time', severity: 'warning', title: `Slow: ${data.totalMs.toFixed(1)} ms in all (threshold ${slowMs} ms)`, advice: 'The slowest spans below, and the Timeline panel, say where the time went; a CPU profile of one request (X-Kernel-Profile: cpu) says what the code did with it.', timeMs: data.totalMs })
      }
      // the spans that weigh: a millisecond at least, and a twentieth of the whole
      const least = Math.max(1, data.totalMs / 20)
      const spans = (data.timeline?.rows ?? []).filter((row) => !KERNEL_ROWS.has(row.kind) && row.kernel === undefined && row.duration !== null && row.duration >= least)
      for (const row of spans.sort((a, b) => (b.duration ?? 0) - (a.duration ?? 0)).slice(0, SLOWEST)) {
        const origin = parsedOrigin(row.origin)
        findings.push({ kind: 'slow_span', panel: 'time', severity: 'info', title: `One of the slowest spans: ${row.kind}`, advice: 'Where the request spent its time: the span\'s own panel has its details.', timeMs: row.duration!, ...(origin === undefined ? {} : { origin }), data: row.name })
      }
      return findings
    },
    figures (data) {
      return { label: 'Time and memory', measures: { totalMs: data.totalMs, controllerMs: data.controllerMs ?? 0, heapUsedEndBytes: data.heapUsedEnd, heapGrowthBytes: data.heapUsedEnd - data.heapUsedStart } }
    }
  }
}
