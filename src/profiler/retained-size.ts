/**
 * What a value the profiler keeps by reference costs in memory, in bytes, estimated by a walk:
 * strings by their characters (two bytes each when V8 stores them so: any character past
 * U+00FF), Buffers, ArrayBuffers and typed arrays by their bytes, objects, arrays, Maps and Sets
 * by their members plus a fixed overhead. Shared references are counted once per walk; a cycle
 * ends there. The walk is bounded (`maxNodes` objects): past it, what is left unseen is counted
 * as `overflow` bytes per unseen member, so that a graph too large to walk is never counted small.
 *
 * Used where the profiler holds what the app gave (a statement's values, a job's data, a mail's
 * body) until a profile is read: the memory storage counts a recording with it, the EXPLAIN
 * cache its entries.
 */

const OBJECT_OVERHEAD = 64
const MEMBER_OVERHEAD = 16
const STRING_OVERHEAD = 16
/** strings shorter than this are counted one byte a character without looking */
const SCAN_FROM = 256
const TWO_BYTE = /[\u0100-\uffff]/

export function stringBytes (text: string): number {
  const wide = text.length >= SCAN_FROM && TWO_BYTE.test(text)
  return STRING_OVERHEAD + (wide ? text.length * 2 : text.length)
}

export interface SizeWalk {
  bytes: number
  /** objects walked so far */
  nodes: number
  readonly seen: Set<object>
}

export function newWalk (): SizeWalk {
  return { bytes: 0, nodes: 0, seen: new Set() }
}

const MAX_NODES = 20_000
/** bytes counted for each member of an object past the walk's bound */
const OVERFLOW = 1024

/** Whether an object is plain data (an object literal, JSON's): a class instance (a pool, a socket, a Job) may reach the whole process. */
function isPlain (item: object): boolean {
  const prototype = Object.getPrototypeOf(item) as object | null
  return prototype === Object.prototype || prototype === null || Array.isArray(item) || item instanceof Map || item instanceof Set
}

/**
 * Adds the bytes of `value` to `walk` (a walk may measure several values: what they share
 * counts once). `plainOnly`: class instances are counted as an object, not followed (an
 * Error by its message), so that a reference to a library's object (a pool a statement went
 * through) never counts the library.
 */
export function addRetained (walk: SizeWalk, value: unknown, maxNodes = MAX_NODES, plainOnly = false): void {
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const item = stack.pop()
    switch (typeof item) {
      case 'string': walk.bytes += stringBytes(item); continue
      case 'number': case 'boolean': case 'undefined': case 'symbol': walk.bytes += 8; continue
      case 'bigint': walk.bytes += 16 + Math.ceil(item.toString(16).length / 2); continue
      case 'function': walk.bytes += OBJECT_OVERHEAD; continue
    }
    if (item === null || typeof item !== 'object') { walk.bytes += 8; continue }
    if (walk.seen.has(item)) continue
    walk.seen.add(item)
    if (ArrayBuffer.isView(item)) { walk.bytes += OBJECT_OVERHEAD + item.byteLength; continue }
    if (item instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && item instanceof SharedArrayBuffer)) { walk.bytes += OBJECT_OVERHEAD + item.byteLength; continue }
    if (item instanceof Date || item instanceof RegExp) { walk.bytes += OBJECT_OVERHEAD; continue }
    if (plainOnly && !isPlain(item)) {
      walk.bytes += OBJECT_OVERHEAD + (item instanceof Error ? stringBytes(item.message) : 0)
      continue
    }
    walk.nodes++
    walk.bytes += OBJECT_OVERHEAD
    if (walk.nodes > maxNodes) {
      // too large to walk: what is unseen counts at a high estimate, never as nothing
      walk.bytes += OVERFLOW * membersOf(item)
      continue
    }
    if (Array.isArray(item)) {
      walk.bytes += item.length * 8
      for (let i = item.length - 1; i >= 0; i--) stack.push(item[i])
    } else if (item instanceof Map) {
      walk.bytes += item.size * MEMBER_OVERHEAD
      for (const [key, member] of item) stack.push(key, member)
    } else if (item instanceof Set) {
      walk.bytes += item.size * MEMBER_OVERHEAD
      for (const member of item) stack.push(member)
    } else {
      let keys: string[]
      try { keys = Object.keys(item) } catch { continue }
      for (const key of keys) {
        walk.bytes += MEMBER_OVERHEAD + key.length
        // a getter may throw, or be costly: only plain data properties are followed
        const descriptor = Object.getOwnPropertyDescriptor(item, key)
        if (descriptor === undefined || !('value' in descriptor)) continue
        stack.push(descriptor.value)
      }
    }
  }
}

function membersOf (item: object): number {
  if (Array.isArray(item)) return item.length
  if (item instanceof Map || item instanceof Set) return item.size
  try { return Object.keys(item).length } catch { return 1 }
}

/** The bytes of one value (see addRetained). */
export function retainedSize (value: unknown, maxNodes = MAX_NODES): number {
  const walk = newWalk()
  addRetained(walk, value, maxNodes)
  return walk.bytes
}
