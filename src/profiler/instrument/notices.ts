import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import satisfies from 'semver/functions/satisfies.js'

/** What the instrumentation of a library found wrong with one copy of it. */
export interface InstrumentationNotice {
  /** the package (`bullmq`) */
  library: string
  /** the copy's version, when its package.json says */
  version: string | undefined
  /** the versions the instrumentation is written for */
  versions: string
  /** what the copy lacks (`Queue#add`); none: only its version is outside the range */
  missing: readonly string[]
  /** what goes unseen for it (`the jobs a unit adds`) */
  unseen: string
  /** the instrumentation threw on this copy (a shape it does not know): the message */
  failure?: string
}

/** What a notice is said through: the app's logger. */
export interface NoticeLogger {
  warn: (fields: object, message: string) => void
}

function message (notice: InstrumentationNotice): string {
  const copy = `${notice.library} ${notice.version ?? '(version unknown)'}`
  if (notice.failure !== undefined) {
    return `fastify-kernel: ${copy} could not be instrumented (${notice.failure}), so the profiles miss its calls`
  }
  if (notice.missing.length === 0) {
    return `fastify-kernel: ${copy} is outside the versions the profiler is written for (${notice.versions}): it is instrumented as far as its shape allows, and what it lacks is said`
  }
  return `fastify-kernel: ${copy} has no ${notice.missing.join(', ')} (not a function), so the profiles miss ${notice.unseen}`
}

/**
 * The instrumentation's notices, said once per process (a library loaded again, or by a second
 * app, says nothing more), each through the logger of a profiler alive then (the newest); one
 * found while none listens waits for the next.
 */
class InstrumentationNotices {
  private readonly said = new Set<string>()
  private readonly loggers: NoticeLogger[] = []
  private readonly waiting: InstrumentationNotice[] = []

  report (notice: InstrumentationNotice): void {
    const key = `${notice.library}@${notice.version ?? '?'}:${notice.missing.join(',')}:${notice.failure ?? ''}`
    if (this.said.has(key)) return
    this.said.add(key)
    const logger = this.loggers.at(-1)
    if (logger === undefined) this.waiting.push(notice)
    else this.say(logger, notice)
  }

  /** Says the notices through `logger` while it listens; the function returned stops it. */
  listen (logger: NoticeLogger): () => void {
    this.loggers.push(logger)
    for (const notice of this.waiting.splice(0)) this.say(logger, notice)
    return () => {
      const index = this.loggers.indexOf(logger)
      if (index !== -1) this.loggers.splice(index, 1)
    }
  }

  private say (logger: NoticeLogger, notice: InstrumentationNotice): void {
    try {
      logger.warn({ library: notice.library, version: notice.version, versions: notice.versions, missing: notice.missing, failure: notice.failure }, message(notice))
    } catch {
      // a logger that fails costs the notice, never the app
    }
  }
}

export const instrumentationNotices = new InstrumentationNotices()

/** What an instrumentation says of the copy it instruments. */
export interface InstrumentedCopy {
  /** the copy's version (its package.json's), when known */
  readonly version: string | undefined
  /**
   * The copy lacks `missing` (methods the instrumentation wraps: `Queue#add`), so `unseen` (`the
   * jobs a unit adds`) is not seen: said once through the app's logger.
   */
  lacks (missing: readonly string[], unseen: string): void
  /** Its instrumentation threw on it (a shape it does not know): said once. */
  failed (error: unknown): void
}

const versions = new Map<string, string | undefined>()

/** The version of the package `name` whose file this is: its nearest package.json of that name. */
export function packageVersionOf (file: string | undefined, name: string): string | undefined {
  if (file === undefined) return undefined
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json')
    if (versions.has(manifest)) return versions.get(manifest)
    if (existsSync(manifest)) {
      try {
        const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown, version?: unknown }
        if (parsed.name === name) {
          const version = typeof parsed.version === 'string' ? parsed.version : undefined
          versions.set(manifest, version)
          return version
        }
      } catch {
        // not a manifest this can read: look further up
      }
    }
    if (dirname(dir) === dir) return undefined
  }
}

/**
 * The copy of `library` (`name`, `versions`) at `file`, as its instrumentation sees it: its
 * version checked against the range (said once when outside it, or not told), and what it lacks.
 */
export function instrumentedCopy (library: { name: string, versions: string }, file: string | undefined): InstrumentedCopy {
  const version = packageVersionOf(file, library.name)
  let known = false
  try {
    known = version !== undefined && satisfies(version, library.versions, { includePrerelease: true })
  } catch {
    known = false
  }
  if (!known && version !== undefined) instrumentationNotices.report({ library: library.name, version, versions: library.versions, missing: [], unseen: '' })
  return {
    version,
    lacks (missing, unseen) {
      instrumentationNotices.report({ library: library.name, version, versions: library.versions, missing, unseen })
    },
    failed (error) {
      instrumentationNotices.report({ library: library.name, version, versions: library.versions, missing: [], unseen: '', failure: error instanceof Error ? error.message : String(error) })
    }
  }
}
