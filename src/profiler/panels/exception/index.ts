import type { ProfilerIntegration } from '../../integration.js'
import { exceptionCollector } from './collector.js'
import { exceptionReader } from './findings.js'

/** The Exception panel: what a unit threw, its causes and their code. */
export const exception: ProfilerIntegration = {
  name: 'exception',
  setup: ({ kernel }) => ({ collectors: [exceptionCollector(kernel.sources)], readers: [exceptionReader] })
}
