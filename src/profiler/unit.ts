import { errorCodes } from '../errors/codes.js'
import { TOKEN_PATTERN } from './token.js'

/**
 * What a recording records: a unit of work. An HTTP request is one kind (`request`, recorded by
 * the kernel's own stage listeners); a job, a command, a scheduled task or an app's own kind are
 * recorded around a function with `app.kernelProfiler.record(unit, fn)`.
 */
export interface UnitOfWork {
  /** `command`, `job`, `task` or an app's own: `[a-z][a-z0-9_-]*`, at most 32 characters */
  kind: string
  /** what it was, shown in the search and on its profile: a command line, a job's queue and name */
  name: string
  /**
   * the token of the profile this unit belongs to, when it is not the recording `record()` is
   * called in (a job processed later links back to the profile that queued it); `null`: none,
   * even when it is called in one (a worker started by a request runs jobs of their own)
   */
  parent?: string | null
}

/** The kind of the recordings the kernel makes of HTTP requests. */
export const REQUEST_KIND = 'request'
/** The kinds the package itself records (an app may name others). */
export const BUILT_IN_KINDS = [REQUEST_KIND, 'command', 'job', 'task'] as const

const KIND = /^[a-z][a-z0-9_-]{0,31}$/
export const MAX_UNIT_NAME = 512

/** The unit `record()` was given, checked (in every mode, so a mistake fails in development and production alike). */
export function checkedUnit (unit: unknown): UnitOfWork {
  const given = (typeof unit === 'object' && unit !== null ? unit : {}) as Partial<Record<keyof UnitOfWork, unknown>>
  const problems: string[] = []
  if (typeof given.kind !== 'string' || !KIND.test(given.kind)) problems.push(`"kind" must match [a-z][a-z0-9_-]* (at most 32 characters), got ${JSON.stringify(given.kind)}`)
  else if (given.kind === REQUEST_KIND) problems.push('"kind" cannot be "request": HTTP requests are recorded by the kernel itself')
  if (typeof given.name !== 'string' || given.name.trim() === '') problems.push('"name" must be a non-empty string')
  if (given.parent !== undefined && given.parent !== null && (typeof given.parent !== 'string' || !TOKEN_PATTERN.test(given.parent))) problems.push(`"parent" must be a profile token (6 lower-case hex characters) or null, got ${JSON.stringify(given.parent)}`)
  if (problems.length > 0) throw new errorCodes.KERNEL_INVALID_UNIT(problems.join('; '))
  const checked: UnitOfWork = { kind: given.kind as string, name: (given.name as string).slice(0, MAX_UNIT_NAME) }
  if (given.parent !== undefined) checked.parent = given.parent as string | null
  return checked
}
