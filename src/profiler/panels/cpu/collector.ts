import type { DeferredCollector } from '../../../kernel/collector.js'
import type { SourceExcerpts } from '../../../errors/source-excerpt.js'
import { PROFILER_PATH } from '../../recording.js'
import { MAX_PROFILE_MS, MAX_PROFILE_NODES, MAX_PROFILE_SAMPLES, isCpuProfile } from './cpu-profile.js'
import type { CpuProfile } from './cpu-profile.js'
import { flameGraph } from './flame-graph.js'
import { FRAME_KINDS, kindFill } from './frames.js'

/** What a profile keeps of its request's CPU profile: V8's profile as it was taken (a `.cpuprofile`), or why there is none. */
export interface CpuData {
  /** the `X-Kernel-Profile: cpu` header, or the toolbar's "profile the next request" */
  asked: 'header' | 'toolbar'
  /** the sampling interval asked of V8, µs */
  intervalUs: number
  profile?: CpuProfile
  /** stopped before the request ended: it ran MAX_PROFILE_MS */
  cut?: boolean
  /** what starting V8's profiler took of the request, ms */
  startMs?: number
  /** why there is no profile */
  missing?: string
  /** the token of the request whose CPU profile was running (this one's was not taken) */
  busyWith?: string
  /** a profile over the bounds, not kept: its size */
  tooLarge?: { nodes: number, samples: number }
}

declare module '../../../kernel/collector.js' {
  interface CollectedData {
    cpu: CpuData
  }
}

/** The download of a profile's `.cpuprofile`. */
export function cpuProfilePath (token: string): string {
  return `${PROFILER_PATH}/${token}/cpuprofile`
}

/** From the first sample to the end (starting the profiler comes before the first sample), ms. */
function sampledMs (profile: CpuProfile): number {
  const first = profile.startTime + (Number(profile.timeDeltas?.[0]) || 0)
  return Math.round(Math.max(0, profile.endTime - first)) / 1000
}

/**
 * The CPU panel: a request that asked for it (`X-Kernel-Profile: cpu`, or the toolbar's
 * "profile the next request") was sampled by V8's CPU profiler while it ran. The profile is
 * stored as V8 made it (a download for Chrome DevTools or speedscope); the flame graph and the
 * table of functions are made from it when the panel is shown, frames mapped to their sources.
 */
export function cpuCollector (sources: SourceExcerpts | undefined): DeferredCollector<CpuData> {
  return {
    name: 'cpu',
    label: 'CPU profile',
    order: 35,
    deferred: true,
    template: 'profiler/collectors/cpu.hbs',
    // function names and file paths, no request data: and the profile is too large to walk for secrets
    masked: true,
    schema: {
      type: 'object',
      required: ['asked', 'intervalUs'],
      properties: {
        asked: { enum: ['header', 'toolbar'] },
        intervalUs: { type: 'number' },
        // shallow: the stored profile is checked where it is read, not item by item here
        profile: { type: 'object', required: ['nodes', 'samples', 'timeDeltas', 'startTime', 'endTime'] },
        cut: { type: 'boolean' },
        startMs: { type: 'number' },
        missing: { type: 'string' },
        busyWith: { type: 'string' },
        tooLarge: { type: 'object' }
      }
    },
    collect ({ context }) {
      const capture = context.get('cpuProfile')
      if (capture === undefined) return undefined
      const data: CpuData = { asked: capture.asked, intervalUs: capture.intervalUs }
      if (capture.refused !== undefined) {
        data.missing = capture.refused.reason
        if (capture.refused.busyWith !== undefined) data.busyWith = capture.refused.busyWith
        return data
      }
      const result = capture.result
      if (result?.cut === true) data.cut = true
      const profile = result?.profile
      if (profile === undefined) {
        data.missing = result?.error ?? 'the profile was not taken'
        return data
      }
      const samples = profile.samples?.length ?? 0
      if (profile.nodes.length > MAX_PROFILE_NODES || samples > MAX_PROFILE_SAMPLES) {
        data.tooLarge = { nodes: profile.nodes.length, samples }
        data.missing = `the profile has ${profile.nodes.length} call-tree nodes and ${samples} samples, more than the ${MAX_PROFILE_NODES} and ${MAX_PROFILE_SAMPLES} a profile keeps`
        return data
      }
      data.profile = profile
      if (result?.startMs !== undefined) data.startMs = Math.round(result.startMs * 1000) / 1000
      return data
    },
    panel (data, summary) {
      const profile = isCpuProfile(data.profile) ? data.profile : undefined
      const graph = profile === undefined ? undefined : flameGraph(profile, sources)
      return {
        ...data,
        profile: undefined,
        byToolbar: data.asked === 'toolbar',
        busyLink: data.busyWith === undefined ? undefined : `${PROFILER_PATH}/${encodeURIComponent(data.busyWith)}?panel=cpu`,
        download: profile === undefined ? undefined : cpuProfilePath(summary.token),
        maxSeconds: MAX_PROFILE_MS / 1000,
        graph,
        legend: FRAME_KINDS.map(({ kind, label }) => ({ kind, label, fill: kindFill(kind) }))
      }
    },
    badge (data) {
      if (data.profile === undefined) return { text: 'none', kind: 'warning' }
      return { text: `${Math.round(sampledMs(data.profile))} ms`, kind: 'info' }
    },
    toolbar (data) {
      if (data === undefined) return undefined
      return { profiled: data.profile !== undefined, sampledMs: data.profile === undefined ? 0 : sampledMs(data.profile), missing: data.missing, samples: data.profile?.samples?.length ?? 0, intervalUs: data.intervalUs }
    }
  }
}
