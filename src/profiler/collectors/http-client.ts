import type { Collector } from '../../kernel/collector.js'
import { HTTP_CLIENT } from '../io/http-client.js'
import type { HttpClientSpanData } from '../io/http-client.js'
import type { TimedCall } from './io.js'
import { ioBadge, ioToolbar, rowClass, spansOfKind, timing, totals } from './io.js'

/** One outgoing HTTP call of the request. */
export interface HttpCallRecord extends TimedCall, HttpClientSpanData {}

export interface HttpClientData {
  calls: HttpCallRecord[]
}

declare module '../../kernel/collector.js' {
  interface CollectedData {
    http_client: HttpClientData
  }
}

function headerRows (headers: Array<[string, string]> | undefined): Array<{ name: string, value: string }> {
  return (headers ?? []).map(([name, value]) => ({ name, value }))
}

/**
 * The HTTP Client panel (Symfony's `http_client`): every call the request made through `fetch`
 * (undici) or node:http, with its status, time, headers and failure; its toolbar item counts
 * them with their total time, highlighted above `thresholdMs`.
 */
export function httpClientCollector (thresholdMs: number): Collector<HttpClientData> {
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
          return call
        })
      }
    },
    panel (data) {
      return {
        ...totals(data.calls),
        thresholdMs,
        calls: data.calls.map((call, index) => ({
          ...call,
          number: index + 1,
          rowClass: rowClass(call),
          isRunning: call.duration === null,
          requestHeaders: headerRows(call.requestHeaders),
          responseHeaders: headerRows(call.responseHeaders)
        }))
      }
    },
    badge (data) {
      return ioBadge(totals(data.calls))
    },
    toolbar (data) {
      return data === undefined ? undefined : ioToolbar(totals(data.calls), thresholdMs)
    }
  }
}
