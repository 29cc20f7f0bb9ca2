import type { ProfilerIntegration } from '../../integration.js'
import { ViewObserver } from './views.js'
import { observeTemplateRuns } from './template-runs.js'
import { templatesCollector } from './collector.js'
import { templatesReader } from './findings.js'

/**
 * The Templates panel: the views a request rendered (`reply.view()`, observed as the request's
 * recording begins) and the template engines' runs (handlebars, observed while a profiler is alive).
 */
export const templates: ProfilerIntegration = {
  name: 'templates',
  channels: [{ instrument: observeTemplateRuns }],
  setup ({ profiler }) {
    const views = new ViewObserver()
    return {
      extensions: [{ name: 'renders', begin (_recording, _context, unit) { if (unit.request !== undefined && unit.reply !== undefined) views.observe(unit.request, unit.reply) } }],
      collectors: [templatesCollector(profiler.options.thresholds.templates)],
      readers: [templatesReader]
    }
  }
}
