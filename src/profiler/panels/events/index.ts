import type { ProfilerIntegration } from '../../integration.js'
import { eventsCollector } from './collector.js'

/** The Events panel (Symfony's): every stage and listener a request went through. */
export const events: ProfilerIntegration = {
  name: 'events',
  setup: ({ trace }) => ({ collectors: [eventsCollector(trace)] })
}
