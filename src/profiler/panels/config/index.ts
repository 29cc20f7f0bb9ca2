import type { ProfilerIntegration } from '../../integration.js'
import { configCollector } from './collector.js'

/** The Configuration panel: the versions, the kernel's features and the plugin tree, the same for every unit of a process. */
export const config: ProfilerIntegration = {
  name: 'config',
  setup: ({ describeApp }) => ({ collectors: [configCollector(describeApp)] })
}
