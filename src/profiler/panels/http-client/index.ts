import type { ProfilerIntegration } from '../../integration.js'
import { HTTP_CLIENT, formatHttpClientSpan, httpClientChannels, settleHttpClientSpan } from './capture.js'
import { httpClientCollector } from './collector.js'
import { httpClientReader } from './findings.js'

/** The HTTP Client panel: the calls a unit made, from undici's (fetch) and node:http's channels. */
export const httpClient: ProfilerIntegration = {
  name: 'http_client',
  channels: httpClientChannels,
  spans: { [HTTP_CLIENT]: { settle: settleHttpClientSpan, format: formatHttpClientSpan } },
  setup ({ profiler }) {
    const { thresholds } = profiler.options
    return {
      collectors: [httpClientCollector({ totalMs: thresholds.http_client, slowMs: thresholds.slow_http_call })],
      readers: [httpClientReader(thresholds.slow_http_call)]
    }
  }
}
