import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import type { Profile } from '../../src/profiler/profile.js'
import type { Span } from '../../src/profiler/spans.js'
import { recordingOf } from '../../src/profiler/recording.js'

declare module '../../src/kernel/collector.js' {
  interface CollectedData { spans: { spans: Span[], dropped: number } }
}

export const host = 'example.test'

/**
 * Sends a request and reads its profile through the public `app.kernelProfiler.profileOf()`
 * (what the README shows apps), which waits for it to be stored.
 */
export async function profiled (app: FastifyInstance, options: InjectOptions): Promise<{ res: LightMyRequestResponse, profile: Profile, token: string }> {
  const res = await app.inject({ ...options, headers: { host, ...(options.headers ?? {}) } })
  const profile = await app.kernelProfiler!.profileOf(res)
  return { res, profile, token: profile.token }
}

/** GET a profiler page from a loopback client. */
export function page (app: FastifyInstance, url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return app.inject({ url, headers: { host, ...headers } })
}

/**
 * A minimal stored profile for storage tests. Each file passes its own token
 * base so tests running in parallel never reuse a token.
 */
export function fakeProfileMaker (tokenBase: number): (overrides?: Partial<Profile>) => Profile {
  let counter = 0
  return (overrides = {}) => {
    const token = (tokenBase + counter++).toString(16)
    return {
      version: 2,
      token,
      method: 'GET',
      url: `http://example.test/p/${token}`,
      statusCode: 200,
      ip: '127.0.0.1',
      time: Date.now(),
      duration: 1,
      aborted: false,
      collected: {},
      ...overrides
    }
  }
}

/** The panels whose figures of a profile raise `flag` (`nPlusOne`), by name. */
export function flaggedPanels (profile: Pick<Profile, 'figures'>, flag: string): string[] {
  return Object.entries(profile.figures ?? {}).filter(([, figures]) => figures[flag] === true).map(([panel]) => panel)
}

/** A test's collector showing the request's spans as they were recorded (the panels read the same list). */
export function spansCollector (app: FastifyInstance): void {
  app.kernel.addCollector({
    name: 'spans',
    label: 'Spans',
    order: 99,
    // read when the profile is, as the panels read the spans: formatted (masked, cut) by then
    deferred: true,
    kinds: 'all',
    collect: ({ context }) => {
      const list = recordingOf(context)?.spans
      return list === undefined ? undefined : { spans: list.spans.map((span) => ({ ...span })), dropped: list.dropped }
    }
  })
}
