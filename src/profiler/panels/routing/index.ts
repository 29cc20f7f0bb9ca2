import type { ProfilerIntegration } from '../../integration.js'
import { routingCollector } from './collector.js'

/** The Routing panel: the route a request matched, or why none did, against the app's route table. */
export const routing: ProfilerIntegration = {
  name: 'routing',
  setup: ({ kernel }) => ({ collectors: [routingCollector(() => kernel.routes.routes)] })
}
