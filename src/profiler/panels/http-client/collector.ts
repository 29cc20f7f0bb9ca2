import type { Collector } from '../../../kernel/collector.js'
import { HTTP_CLIENT } from './capture.js'
import type { HttpClientSpanData } from './capture.js'
import type { ShownBody } from './http-body.js'
import type { TimedCall } from '../../panel-kit/calls.js'
import { rowClass, spansOfKind, timing, totals } from '../../panel-kit/calls.js'
import { N_PLUS_ONE } from '../../panel-kit/repeats.js'
import { repeatedShapes, urlShape } from '../../panel-kit/repeats.js'
import type { Repeated } from '../../panel-kit/repeats.js'

/** One outgoing HTTP call of the unit. */
export interface HttpCallRecord extends TimedCall, HttpClientSpanData {}

export interface HttpClientData {
  calls: HttpCallRecord[]
}

declare module '../../../kernel/collector.js' {
  interface CollectedData {
    http_client: HttpClientData
  }
}

export interface HttpClientThresholds {
  /** the panel's total time above which its toolbar item is highlighted (ms) */
  totalMs: number
  /** one call this slow or slower is highlighted (ms) */
  slowMs: number
}

function headerRows (headers: Array<[string, string]> | undefined): Array<{ name: string, value: string }> {
  return (headers ?? []).map(([name, value]) => ({ name, value }))
}

/** A call's shape: its method and its URL with the ids of its path and the values of its query taken out. */
export function callShape (call: HttpCallRecord): string {
  return `${call.method} ${urlShape(call.url)}`
}

/** A JSON body shown indented (it is stored compact); any other text as it is. */
function readable (body: ShownBody | undefined): object | undefined {
  if (body === undefined) return undefined
  let text = body.text
  if (text !== undefined && /^\s*[[{]/.test(text)) {
    try {
      text = JSON.stringify(JSON.parse(text), null, 2)
    } catch {
      // cut, or not JSON after all
    }
  }
  return { ...body, text }
}

export function analyse (data: HttpClientData): Repeated[] {
  return repeatedShapes(data.calls, callShape, (call) => `${call.method} ${call.url}`, N_PLUS_ONE)
}

/**
 * The HTTP Client panel (Symfony's `http_client`, Telescope's client requests): every call the
 * unit made through `fetch` (undici) or node:http, with its status, time, headers, where the
 * app made it, the bodies when they are text (the first 64 KiB, masked), and the call as a
 * curl command to copy (secrets masked). A call of `slowMs` or more is highlighted; calls to one
 * URL shape (ids taken out of the path) 3 times or more are flagged as a likely N+1. The
 * toolbar item counts the calls with their total time, highlighted above `totalMs`.
 */
export function httpClientCollector (thresholds: HttpClientThresholds): Collector<HttpClientData> {
  return {
    name: HTTP_CLIENT,
    kinds: 'all',
    label: 'HTTP Client',
    order: 47,
    deferred: true,
    template: 'profiler/collectors/http_client.hbs',
    // the spans were masked when the profile was built (their formatter)
    masked: true,
    schema: {
      type: 'object',
      required: ['calls'],
      properties: { calls: { type: 'array', items: { type: 'object', required: ['method', 'url', 'start'], properties: { method: { type: 'string' }, url: { type: 'string' }, start: { type: 'number' } } } } }
    },
    collect ({ context }) {
      return {
        calls: spansOfKind(context, HTTP_CLIENT).map((span) => {
          const data = span.data as Partial<HttpClientSpanData>
          // field by field, no spread: a profile may hold a thousand of them
          const call = timing(span) as HttpCallRecord
          call.method = String(data.method ?? '')
          call.url = String(data.url ?? span.name)
          if (data.status !== undefined) call.status = data.status
          if (data.timedOut === true) call.timedOut = true
          if (data.requestHeaders !== undefined) call.requestHeaders = data.requestHeaders
          if (data.responseHeaders !== undefined) call.responseHeaders = data.responseHeaders
          if (data.requestBody !== undefined) call.requestBody = data.requestBody
          if (data.responseBody !== undefined) call.responseBody = data.responseBody
          if (data.curl !== undefined) call.curl = data.curl
          return call
        })
      }
    },
    panel (data) {
      const repeated = analyse(data)
      const byShape = new Map(repeated.map((entry) => [entry.shape, entry]))
      const slow = (call: HttpCallRecord): boolean => call.duration !== null && call.duration >= thresholds.slowMs
      return {
        ...totals(data.calls),
        thresholdMs: thresholds.totalMs,
        slowMs: thresholds.slowMs,
        slowCount: data.calls.filter(slow).length,
        nPlusOne: repeated,
        calls: data.calls.map((call, index) => ({
          ...call,
          number: index + 1,
          rowClass: rowClass(call, thresholds.slowMs),
          isRunning: call.duration === null,
          slow: slow(call),
          repeated: byShape.get(callShape(call))?.count,
          requestHeaders: headerRows(call.requestHeaders),
          responseHeaders: headerRows(call.responseHeaders),
          requestBody: readable(call.requestBody),
          responseBody: readable(call.responseBody),
          // a body was sent that the command does not carry: not text, cut, or node:http's (not captured)
          bodyLeftOut: call.curl !== undefined && !['GET', 'HEAD'].includes(call.method) && (call.requestBody?.text === undefined || call.requestBody.cut === true)
        }))
      }
    },
    badge (data) {
      const sums = totals(data.calls)
      if (sums.errors > 0) return { text: String(sums.errors), kind: 'error' }
      if (analyse(data).length > 0) return { text: `${sums.count} (N+1)`, kind: 'warning' }
      if (data.calls.some((call) => call.duration !== null && call.duration >= thresholds.slowMs)) return { text: String(sums.count), kind: 'warning' }
      return sums.count > 0 ? { text: String(sums.count), kind: 'info' } : undefined
    },
    toolbar (data) {
      if (data === undefined) return undefined
      const sums = totals(data.calls)
      if (sums.count === 0) return undefined
      const repeated = analyse(data).length
      const slowCount = data.calls.filter((call) => call.duration !== null && call.duration >= thresholds.slowMs).length
      return {
        ...sums,
        totalMs: sums.totalMs.toFixed(1),
        thresholdMs: thresholds.totalMs,
        slowMs: thresholds.slowMs,
        slowCount,
        nPlusOne: repeated,
        highlight: sums.errors > 0 ? 'error' : sums.totalMs > thresholds.totalMs || slowCount > 0 || repeated > 0 ? 'warning' : null
      }
    },
    figures (data) {
      return { nPlusOne: analyse(data).length > 0 }
    }
  }
}
