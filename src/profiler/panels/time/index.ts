import type { ProfilerIntegration } from '../../integration.js'
import { RecordingStopwatch } from './stopwatch.js'
import { observeMeasures } from './measures.js'
import { timeCollector } from './collector.js'
import { timeReader } from './findings.js'

/**
 * The Performance panel: the timeline of a unit (its stages, spans, the app's stopwatch
 * periods and `performance.measure()`s). The stopwatch lives as long as a recording;
 * `performance.measure` is wrapped while a profiler is alive.
 */
export const time: ProfilerIntegration = {
  name: 'time',
  channels: [{ instrument: observeMeasures }],
  setup: ({ profiler }) => ({
    extensions: [{ name: 'stopwatch', begin (recording, context) { context.set('stopwatch', new RecordingStopwatch(recording.spans, context.startedAt)) } }],
    collectors: [timeCollector(profiler.options.thresholds.time)],
    readers: [timeReader(profiler.options.thresholds.time)]
  })
}
