import type { PanelReader } from '../../findings.js'
import type { DumpData } from './collector.js'

/** What the Dumps panel tells agents and scripts: the flag, and where each dump() was left. */
export const dumpReader: PanelReader<DumpData> = {
  panel: 'dump',
  flags (data) {
    return data.dumps.length + data.dropped > 0 ? ['dumps'] : []
  },
  findings (data) {
    return data.dumps.slice(0, 10).map((dump) => ({
      kind: 'dump',
      panel: 'dump',
      severity: 'info' as const,
      title: 'A dump() call',
      advice: 'A debugging call left in the code: remove it once done.',
      count: 1,
      ...(dump.file === undefined || dump.line === undefined ? {} : { origin: { file: dump.file, line: dump.line } }),
      ...(dump.label === undefined ? {} : { data: dump.label })
    }))
  },
  figures (data) {
    return { label: 'Dumps', measures: { dumps: data.dumps.length + data.dropped } }
  }
}
