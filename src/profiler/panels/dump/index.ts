import type { ProfilerIntegration } from '../../integration.js'
import { listenToDumps, settleDumps } from './dump.js'
import { dumpCollector } from './collector.js'
import { dumpReader } from './findings.js'

/** The Dumps panel: what a unit `dump()`ed (a no-op while no profiler is alive), where in the app's code. */
export const dump: ProfilerIntegration = {
  name: 'dump',
  channels: [{ instrument: listenToDumps }],
  setup: ({ profiler }) => ({
    extensions: [{
      name: 'dumps',
      end (_recording, context) { settleDumps(context, profiler.origins) },
      // what a memory storage counts of the unit: the dumped values (each bounded as it was dumped)
      held (context, count) { count(context.get('dumps')?.dumps) }
    }],
    collectors: [dumpCollector(profiler.origins)],
    readers: [dumpReader]
  })
}
