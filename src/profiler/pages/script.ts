import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { templatesDir } from '../../config/paths.js'
import { PROFILER_PATH } from '../recording.js'

/** The profiler pages' script (their Copy buttons), a file of its own: no inline code. */
export const PROFILER_SCRIPT = `${PROFILER_PATH}/profiler.js`

export function readProfilerScript (): string {
  return readFileSync(join(templatesDir, 'profiler', 'profiler.js'), 'utf8')
}
