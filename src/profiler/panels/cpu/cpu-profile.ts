/**
 * V8's CPU profile, as `node:inspector`'s `Profiler.stop` returns it and as Chrome DevTools,
 * speedscope and `node --cpu-prof` read it (a `.cpuprofile` file is this object's JSON): a call
 * tree of nodes, and the node each sample hit with the microseconds since the previous one.
 */
export interface CpuCallFrame {
  functionName: string
  scriptId: string
  /** `file:///…` (ES modules), an absolute path (CommonJS), `node:…`, or empty (native, the VM's own nodes) */
  url: string
  /** 0-based, of the function's start */
  lineNumber: number
  columnNumber: number
}

export interface CpuProfileNode {
  id: number
  callFrame: CpuCallFrame
  hitCount?: number
  children?: number[]
  positionTicks?: Array<{ line: number, ticks: number }>
  deoptReason?: string
}

export interface CpuProfile {
  nodes: CpuProfileNode[]
  /** microseconds, on the VM's monotonic clock */
  startTime: number
  endTime: number
  /** the node id of each sample */
  samples?: number[]
  /** microseconds from the previous sample (the first: from startTime) */
  timeDeltas?: number[]
}

/** The sampling interval asked of V8, in microseconds (its default, `--cpu-prof-interval`, is 1000). */
export const SAMPLING_INTERVAL_US = 100
/**
 * A CPU profile stops after this long, whatever its request still does (a stream, a long poll):
 * at 100 µs that is at most 300,000 samples, about 3 MB of JSON.
 */
export const MAX_PROFILE_MS = 30_000
/** Call-tree nodes kept: a profile with more is not stored (the panel says how large it was). */
export const MAX_PROFILE_NODES = 50_000
/** Samples kept: beyond MAX_PROFILE_MS of sampling, which the cut never lets happen; a safety bound. */
export const MAX_PROFILE_SAMPLES = 400_000

/** Whether a value is shaped as a CPU profile (stored data is read back as it was written). */
export function isCpuProfile (value: unknown): value is CpuProfile {
  const profile = value as Partial<CpuProfile> | null
  return typeof profile === 'object' && profile !== null && Array.isArray(profile.nodes) && Array.isArray(profile.samples) &&
    Array.isArray(profile.timeDeltas) && typeof profile.startTime === 'number' && typeof profile.endTime === 'number'
}
