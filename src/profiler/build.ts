import type { Kernel } from '../kernel/kernel.js'
import { statusOf } from '../errors/flatten.js'
import { truncate } from '../http/redact.js'
import type { Profile, ProfileSummary } from './profile.js'
import type { ProfileFigures } from '../kernel/collector.js'
import { plainFigures } from './profile.js'
import type { Recording } from './recording.js'
import { REQUEST_KIND } from './unit.js'
import type { PanelReader } from './findings.js'
import { flagsOf } from './flags.js'
import { boundProfile } from './profile-bound.js'

const MAX_URL = 8192

/**
 * A recording's summary: what the search lists, built from what it kept. A request's URL is
 * masked; another unit is summarised as Symfony summarises a console command: the kind as the
 * method, the name as the URL, an exit code (0: returned, 1: threw) as the status.
 */
export function summaryOf (kernel: Kernel, recording: Recording): ProfileSummary {
  const { context } = recording
  const duration = Math.round(recording.totalMs * 1000) / 1000
  const request = recording.request
  const summary: ProfileSummary = recording.kind === REQUEST_KIND && request !== undefined
    ? {
        token: recording.token,
        method: request.method,
        url: truncate(kernel.redactor.url(context.requestUrl(request.url)), MAX_URL),
        statusCode: request.response !== null ? request.response.statusCode : context.exception !== undefined && context.exception !== null ? statusOf(context.exception, context.replyStatus) : 0,
        ip: request.ip,
        time: context.startedAtEpoch,
        duration
      }
    : {
        token: recording.token,
        kind: recording.kind,
        name: recording.name ?? '',
        method: recording.kind.toUpperCase(),
        url: truncate(recording.name ?? '', MAX_URL),
        statusCode: recording.failed ? 1 : 0,
        ip: '',
        time: context.startedAtEpoch,
        duration
      }
  if (recording.parent !== undefined) summary.parent = recording.parent
  return summary
}

/**
 * The profile of a recording: its summary, and what each of the kernel's collectors collected
 * of it (the deferred ones now, from what it kept; the profiler knows none of their shapes).
 * `failed` reports a collector that threw (its panel is left out).
 */
export function buildProfile (kernel: Kernel, recording: Recording, failed: (collector: string, error: unknown) => void, readers: ReadonlyArray<PanelReader<any>> = []): Profile {
  // raw span data (what channel handlers kept) becomes masked, cut data before any collector reads it
  recording.spans.format(kernel.redactor)
  const collected = kernel.collectRecorded({ kind: recording.kind, name: recording.name ?? '', context: recording.context, aborted: recording.aborted, request: recording.request }, recording.live, failed)
  const profile: Profile = { version: 2, ...summaryOf(kernel, recording), aborted: recording.aborted, collected }
  addFigures(kernel, profile)
  if (recording.cut !== undefined) profile.cut = recording.cut
  // what the panels' readers flag (an exception, error logs, a likely N+1…), for the search's
  // filters: read from the whole profile, before it is bounded
  const flags = flagsOf(profile, readers)
  if (flags.length > 0) profile.flags = flags
  // bounded before any storage gets it (and before a page shows it)
  boundProfile(profile)
  return profile
}

/** The summary's figures (what the search and the tools filter on), each panel's under its name, from the collectors that give them. */
export function addFigures (kernel: Kernel, profile: Profile): void {
  let figures: ProfileFigures | undefined
  for (const collector of kernel.collectors) {
    const data = profile.collected[collector.name]
    if (collector.figures === undefined || data === undefined) continue
    try {
      const given = plainFigures(collector.figures(data))
      if (given !== undefined) (figures ??= {})[collector.name] = given
    } catch {
      // a collector's figures that fail leave them out, never the profile
    }
  }
  if (figures !== undefined) profile.figures = figures
}
