import { retainedSize } from './retained-size.js'

/**
 * What the profiler keeps of a value the app handed a library (a statement's values, a Redis
 * command's arguments, a job's data) once its unit ended, until its profile is read: the value
 * itself when it is small (no copy), else a copy bounded per item, every cut marked where the
 * panel shows it. So that a 4 MB value read forty times costs forty cut copies, not 160 MB.
 */

/** Bytes a kept value may take before it is cut. */
export const MAX_KEPT_VALUE_BYTES = 64 * 1024
/** Characters a string of a cut value keeps. */
export const MAX_KEPT_STRING = 16 * 1024
const MAX_ITEMS = 1000
const MAX_DEPTH = 8

/** The mark a cut string ends with: visible in every panel that shows it. */
export function cutMark (left: number, unit = 'characters'): string {
  return `… [cut by the profiler: ${left} more ${unit}]`
}

/** A string of at most `max` characters, the rest told by the cut mark. */
export function cutString (text: string, max = MAX_KEPT_STRING): string {
  return text.length <= max ? text : `${text.slice(0, max)}${cutMark(text.length - max)}`
}

/** Whether a value was cut (its copy holds a cut mark): it cannot be used again as the app gave it (EXPLAIN). */
export interface Bounded {
  value: unknown
  cut: boolean
}

/**
 * `value` as is when it takes at most `maxBytes`; else a copy with long strings cut, large
 * buffers replaced by a note of their size, long arrays and objects cut, deep ones cut at
 * MAX_DEPTH, cycles as `[circular]`.
 */
export function boundedValue (value: unknown, maxBytes = MAX_KEPT_VALUE_BYTES, maxString = MAX_KEPT_STRING): Bounded {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'string' && value.length > maxString && retainedSize(value) > maxBytes) return { value: cutString(value, maxString), cut: true }
    return { value, cut: false }
  }
  if (retainedSize(value) <= maxBytes) return { value, cut: false }
  return { value: copy(value, maxString, 0, new Set()), cut: true }
}

function copy (value: unknown, maxString: number, depth: number, seen: Set<object>): unknown {
  if (typeof value === 'string') return cutString(value, maxString)
  if (value === null || typeof value !== 'object') return value
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
    const bytes = value.byteLength
    return bytes <= maxString ? value : `[${bytes} bytes${cutMark(bytes, 'bytes').slice(1)}]`
  }
  if (value instanceof Date || value instanceof RegExp) return value
  if (seen.has(value)) return '[circular]'
  if (depth >= MAX_DEPTH) return '[… cut by the profiler: too deep]'
  seen.add(value)
  try {
    if (Array.isArray(value)) {
      const out = value.slice(0, MAX_ITEMS).map((item) => copy(item, maxString, depth + 1, seen))
      if (value.length > MAX_ITEMS) out.push(cutMark(value.length - MAX_ITEMS, 'items'))
      return out
    }
    if (value instanceof Map || value instanceof Set) return `[${value.constructor.name} of ${value.size}${cutMark(value.size, 'entries').slice(1)}]`
    const out: Record<string, unknown> = {}
    const keys = Object.keys(value)
    for (const key of keys.slice(0, MAX_ITEMS)) {
      const descriptor = Object.getOwnPropertyDescriptor(value, key)
      out[key] = descriptor !== undefined && 'value' in descriptor ? copy(descriptor.value, maxString, depth + 1, seen) : '[accessor]'
    }
    if (keys.length > MAX_ITEMS) out['…'] = cutMark(keys.length - MAX_ITEMS, 'keys')
    return out
  } finally {
    seen.delete(value)
  }
}
