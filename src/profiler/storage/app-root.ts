import { existsSync, realpathSync } from 'node:fs'
import { dirname, join, sep } from 'node:path'
import { consoleAppModule } from './read-only.js'

/** The file storage's folder under the app's root when `profiler.directory` is not given (Symfony's `var/`). */
export const DEFAULT_PROFILER_FOLDER = join('var', 'profiler')

/**
 * The app's root: the nearest folder above its entry that holds a `package.json`, outside
 * `node_modules`. The entry is the script Node was started with (`node dist/server.js`,
 * `node dist/worker.js`, `tsx src/command.ts`: every process of one app finds the same root,
 * whatever its working directory), or the app module the console loads. A script inside
 * `node_modules` (a test runner, a process manager) leads up to the project that installed it.
 * Without an entry (a REPL, `node -e`) or a `package.json` above it: the working directory.
 */
export function appRoot (entry: string | undefined = consoleAppModule() ?? process.argv[1]): string {
  if (entry === undefined || entry === '') return process.cwd()
  let dir: string
  try {
    dir = dirname(realpathSync(entry))
  } catch {
    return process.cwd()
  }
  for (;;) {
    if (!dir.split(sep).includes('node_modules') && existsSync(join(dir, 'package.json'))) return dir
    const parent = dirname(dir)
    if (parent === dir) return process.cwd()
    dir = parent
  }
}

/** Where the file storage keeps profiles by default: `var/profiler` under the app's root. */
export function defaultProfilerDirectory (): string {
  return join(appRoot(), DEFAULT_PROFILER_FOLDER)
}
