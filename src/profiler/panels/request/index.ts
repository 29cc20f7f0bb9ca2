import type { ProfilerIntegration } from '../../integration.js'
import { requestCollector } from './collector.js'

/** The Request panel: what the request sent and what its response was (from its snapshot). */
export const request: ProfilerIntegration = {
  name: 'request',
  setup: () => ({ collectors: [requestCollector] })
}
