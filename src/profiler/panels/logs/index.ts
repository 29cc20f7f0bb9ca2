import type { ProfilerIntegration } from '../../integration.js'
import { logsCollector } from './collector.js'
import { logsReader } from './findings.js'

/**
 * The Logs panel: the records a unit logged. Capturing them is the recording's own (a
 * request's from `request.log`, another unit's from pino's channel: `log-capture.ts`,
 * `unit-logs.ts`), as its spans are: this panel shows them.
 */
export const logs: ProfilerIntegration = {
  name: 'logs',
  setup: () => ({ collectors: [logsCollector], readers: [logsReader] })
}
