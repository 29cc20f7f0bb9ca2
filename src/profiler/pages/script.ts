import { readFileSync } from 'node:fs'
import { isAbsolute, join } from 'node:path'
import { templatesDir } from '../../config/paths.js'
import { PROFILER_PATH } from '../recording.js'

/** The profiler pages' script (their Copy buttons, the phone's menu), a file of its own: no inline code. */
export const PROFILER_SCRIPT = `${PROFILER_PATH}/profiler.js`

/** A script of the profiler's pages: the pages' own, or a panel's (`file`: absolute, or relative to the kernel's `templates/`). */
export function readProfilerScript (file = 'profiler/profiler.js'): string {
  return readFileSync(isAbsolute(file) ? file : join(templatesDir, file), 'utf8')
}
