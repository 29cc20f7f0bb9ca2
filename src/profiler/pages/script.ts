import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { templatesDir } from '../../config/paths.js'
import { PROFILER_PATH } from '../recording.js'

/** The profiler pages' script (their Copy buttons, the phone's menu), a file of its own: no inline code. */
export const PROFILER_SCRIPT = `${PROFILER_PATH}/profiler.js`

/** The CPU panel's flame graph script (zoom, search, app code only, keyboard and tooltips). */
export const FLAME_GRAPH_SCRIPT = `${PROFILER_PATH}/flame-graph.js`

/** The pages' scripts: URL, route name and file under templates/profiler/. */
export const PROFILER_SCRIPTS: ReadonlyArray<{ path: string, name: string, file: string }> = [
  { path: PROFILER_SCRIPT, name: '_profiler_script', file: 'profiler.js' },
  { path: FLAME_GRAPH_SCRIPT, name: '_profiler_flame_graph_script', file: 'flame-graph.js' }
]

export function readProfilerScript (file = 'profiler.js'): string {
  return readFileSync(join(templatesDir, 'profiler', file), 'utf8')
}
