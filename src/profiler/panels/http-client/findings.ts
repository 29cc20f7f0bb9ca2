import type { Finding, PanelReader } from '../../findings.js'
import { commonOrigin, ms, originOf } from '../../findings.js'
import type { HttpCallRecord, HttpClientData } from './collector.js'
import { analyse, callShape } from './collector.js'
import { HTTP_CLIENT } from './capture.js'

const SLOW_LISTED = 5

const failed = (call: HttpCallRecord): boolean => call.error !== undefined || (call.status !== undefined && call.status >= 500)

/**
 * What the HTTP Client panel tells agents and scripts: the flags (likely N+1, slow and failed
 * calls), triage's findings (each repeated URL shape with its count, time and the app's line
 * that made the calls; the slowest calls; failures and 5xx answers) and a comparison's figures
 * (calls, time, shapes).
 */
export function httpClientReader (slowMs: number): PanelReader<HttpClientData> {
  const slow = (call: HttpCallRecord): boolean => call.duration !== null && call.duration >= slowMs
  return {
    panel: HTTP_CLIENT,
    flags (data) {
      const flags: string[] = []
      if (analyse(data).length > 0) flags.push('n_plus_one')
      if (data.calls.some(slow)) flags.push('slow_calls')
      if (data.calls.some(failed)) flags.push('failed_calls')
      return flags
    },
    findings (data) {
      const repeated = analyse(data)
      const findings: Finding[] = repeated.map((group) => ({
        kind: 'n_plus_one',
        panel: HTTP_CLIENT,
        severity: 'warning',
        title: `Likely N+1: ${group.count} HTTP calls to one URL shape, ${group.variants} different URLs`,
        advice: 'One call is made per item of a list: ask the API for all of them at once (a batch or list endpoint), or make the calls concurrently, where the loop at the origin makes them.',
        count: group.count,
        timeMs: group.totalMs,
        origin: commonOrigin(data.calls.filter((call) => callShape(call) === group.shape).map((call) => call.origin)),
        data: group.shape
      }))
      for (const call of data.calls.filter(failed)) {
        findings.push({ kind: 'failed_call', panel: HTTP_CLIENT, severity: 'error', title: call.error !== undefined ? 'An HTTP call failed' : `An HTTP call was answered ${call.status ?? ''}`, advice: 'The service called failed or refused: read its answer in the HTTP Client panel (status, body), and whether the app handles it.', count: 1, timeMs: call.duration ?? undefined, origin: originOf(call.origin), data: `${call.error ?? String(call.status ?? '')} | ${call.method} ${call.url}` })
      }
      const shaped = new Set(repeated.map((group) => group.shape))
      const slowest = data.calls.filter((call) => slow(call) && !failed(call) && !shaped.has(callShape(call))).sort((a, b) => (b.duration ?? 0) - (a.duration ?? 0)).slice(0, SLOW_LISTED)
      for (const call of slowest) {
        findings.push({ kind: 'slow_call', panel: HTTP_CLIENT, severity: 'warning', title: `Slow HTTP call: ${call.duration!.toFixed(1)} ms (threshold ${slowMs} ms)`, advice: 'The service called is slow: cache its answer, call it in the background, or set a timeout; the origin is the app\'s line that called it.', count: 1, timeMs: call.duration!, origin: originOf(call.origin), data: `${call.method} ${call.url}${call.status === undefined ? '' : ` → ${call.status}`}` })
      }
      return findings
    },
    figures (data) {
      const shapes: Record<string, number> = {}
      let timeMs = 0
      for (const call of data.calls) {
        const shape = callShape(call)
        shapes[shape] = (shapes[shape] ?? 0) + 1
        timeMs += call.duration ?? 0
      }
      return { label: 'HTTP Client', measures: { calls: data.calls.length, timeMs: ms(timeMs), failed: data.calls.filter(failed).length }, shapes, nPlusOne: analyse(data).map((group) => group.shape) }
    }
  }
}
