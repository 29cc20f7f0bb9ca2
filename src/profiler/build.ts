import type { Kernel } from '../kernel/kernel.js'
import { isFinishedRequest } from '../kernel/collector.js'
import { statusOf } from '../errors/flatten.js'
import { truncate } from '../http/redact.js'
import type { Profile } from './profile.js'
import type { Recording } from './recording.js'
import type { EndedUnit } from './recorder.js'

const MAX_URL = 8192

/**
 * The profile of a unit that ended: its summary, and what each of the kernel's collectors
 * collected of it (the profiler knows none of their shapes). `failed` reports a collector that
 * threw (its panel is left out).
 */
export function buildProfile (kernel: Kernel, recording: Recording, ended: EndedUnit, failed: (collector: string, error: unknown) => void): Profile {
  // raw span data (what channel handlers kept) becomes masked, cut data before any collector reads it
  recording.spans.format(kernel.redactor)
  const collected = kernel.collect(ended, failed)
  const { context } = ended
  const duration = Math.round(recording.totalMs * 1000) / 1000
  const profile: Profile = isFinishedRequest(ended)
    ? {
        version: 2,
        token: recording.token,
        method: ended.request.method,
        url: truncate(kernel.redactor.url(context.requestUrl(ended.request.url)), MAX_URL),
        statusCode: typeof ended.reply.getHeaders === 'function' ? ended.reply.statusCode : context.exception !== undefined && context.exception !== null ? statusOf(context.exception) : 0,
        ip: ended.request.ip ?? '',
        time: context.startedAtEpoch,
        duration,
        aborted: recording.aborted,
        collected
      }
    : {
        // as Symfony summarises a console command: the kind as the method, the name as the URL, an exit code
        version: 2,
        token: recording.token,
        kind: ended.kind,
        name: ended.name,
        method: ended.kind.toUpperCase(),
        url: truncate(ended.name, MAX_URL),
        statusCode: recording.failed ? 1 : 0,
        ip: '',
        time: context.startedAtEpoch,
        duration,
        aborted: false,
        collected
      }
  if (recording.parent !== undefined) profile.parent = recording.parent
  addFigures(kernel, profile)
  return profile
}

/** The summary's figures the search page filters on (statements, likely N+1), from the collectors that give them. */
function addFigures (kernel: Kernel, profile: Profile): void {
  let statements: number | undefined
  const nPlusOne: string[] = []
  for (const collector of kernel.collectors) {
    const data = profile.collected[collector.name]
    if (collector.figures === undefined || data === undefined) continue
    try {
      const figures = collector.figures(data)
      if (typeof figures.statements === 'number') statements = (statements ?? 0) + figures.statements
      if (figures.nPlusOne === true) nPlusOne.push(collector.name)
    } catch {
      // a collector's figures that fail leave them out, never the profile
    }
  }
  // no statement collected is 0 statements (older profiles, without the figure, match no such filter)
  profile.statements = statements ?? 0
  if (nPlusOne.length > 0) profile.nPlusOne = nPlusOne
}
