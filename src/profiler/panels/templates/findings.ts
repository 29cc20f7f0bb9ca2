import type { PanelReader } from '../../findings.js'
import { originOf } from '../../findings.js'
import type { TemplatesData } from './collector.js'

/** What the Templates panel tells agents and scripts: failed renders, and a comparison's renders and time. */
export const templatesReader: PanelReader<TemplatesData> = {
  panel: 'templates',
  findings (data) {
    return data.renders.filter((render) => render.error !== undefined).map((render) => ({
      kind: 'failed_render',
      panel: 'templates',
      severity: 'error' as const,
      title: 'A template render failed',
      advice: 'Read the engine\'s message (before the template in `data`) and the template\'s data.',
      count: 1,
      ...(render.origin === undefined ? {} : { origin: originOf(render.origin)! }),
      data: `${render.error ?? ''} | ${render.template}`
    }))
  },
  figures (data) {
    return { label: 'Templates', measures: { renders: data.renders.length, timeMs: data.totalMs } }
  }
}
