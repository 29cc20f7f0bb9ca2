import { inspect } from 'node:util'
import type { InspectOptions } from 'node:util'

/**
 * How much of a value `dump()` walks, as Symfony's VarDumper caps it: `maxItems` items in all
 * (VarCloner's default, 2500), `maxItemsPerDepth` entries of any one object, array, Map or Set
 * (Symfony's `Data::withMaxItemsPerDepth`, unbounded there by default; here a tenth of the
 * whole, so that a long list leaves room for its entries' own fields), strings cut at
 * `maxString` characters, `maxDepth` levels below the value. The walk is breadth-first, as
 * VarCloner's: the shallow levels are dumped first, what the bound leaves out is counted.
 */
export const DUMP_LIMITS = { maxItems: 2500, maxItemsPerDepth: 250, maxString: 10_000, maxDepth: 4 } as const

export const DUMP_INSPECT: InspectOptions = {
  depth: DUMP_LIMITS.maxDepth,
  maxArrayLength: DUMP_LIMITS.maxItemsPerDepth,
  maxStringLength: DUMP_LIMITS.maxString,
  breakLength: 100,
  compact: 3,
  colors: false,
  getters: false
}

/** What a bounded walk kept of a value: the value to inspect, and its counts. */
export interface BoundedValue {
  value: unknown
  /** entries (properties, elements, Map and Set entries) walked */
  items: number
  /** entries of the walked objects the bounds left out (not those of an object elided whole, `[Object]`, which is not read) */
  cut: number
}

type Kind = 'object' | 'array' | 'map' | 'set'

/** A container the bounds cut: shown as its kept entries, then how many more it has. */
class Cut {
  constructor (readonly copy: object, readonly kind: Kind, readonly size: number, readonly more: number) {}

  [inspect.custom] (_depth: number, options: InspectOptions): string {
    let text = inspect(this.copy, options)
    if (this.kind === 'map' || this.kind === 'set') text = text.replace(/^([^({[]*)\(\d+\)/, `$1(${this.size})`)
    const more = `... ${this.more} more ${this.kind === 'object' ? (this.more === 1 ? 'key' : 'keys') : (this.more === 1 ? 'item' : 'items')}`
    const close = Math.max(text.lastIndexOf('}'), text.lastIndexOf(']'))
    if (close === -1) return `${text} ${more}`
    const before = text.slice(0, close).trimEnd()
    if (text.includes('\n')) return `${before},\n  ${more}\n${text.slice(close)}`
    return /[{[]$/.test(before) ? `${before} ${more} ${text.slice(close)}` : `${before}, ${more} ${text.slice(close)}`
  }
}

/** A container the whole bound was spent before: shown as inspect shows one below its depth (`[Object]`, `[Array]`). */
class Elided {
  constructor (private readonly name: string) {}

  [inspect.custom] (): string {
    return `[${this.name}]`
  }
}

function kindOf (value: unknown): Kind | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  if (Array.isArray(value)) return 'array'
  if (value instanceof Map) return 'map'
  if (value instanceof Set) return 'set'
  // plain objects and class instances; not Errors, Dates, typed arrays, Buffers…, nor what
  // inspects itself: inspect formats those, with its own bounds
  if (Object.prototype.toString.call(value) !== '[object Object]') return undefined
  return typeof (value as Record<symbol, unknown>)[inspect.custom] === 'function' ? undefined : 'object'
}

function nameOf (value: object, kind: Kind): string {
  if (kind === 'array') return 'Array'
  const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name
  return typeof name === 'string' && name !== '' ? name : kind === 'object' ? 'Object' : kind === 'map' ? 'Map' : 'Set'
}

/** The object's entries inspect shows: its enumerable own string keys, then symbols. */
function keysOf (value: object): PropertyKey[] {
  const keys: PropertyKey[] = Object.keys(value)
  for (const symbol of Object.getOwnPropertySymbols(value)) {
    if (Object.prototype.propertyIsEnumerable.call(value, symbol)) keys.push(symbol)
  }
  return keys
}

interface Pending {
  source: object
  copy: object
  kind: Kind
  depth: number
  keep: number
  keys?: PropertyKey[]
}

/**
 * `value` bounded by DUMP_LIMITS, for `inspect(…, DUMP_INSPECT)`: the objects, arrays, Maps and
 * Sets within `maxDepth` copied with the entries the bounds keep, breadth-first; the value
 * itself when it has no container. Costs what the kept entries cost, and for each object walked
 * one listing of its keys (V8 has no lazier way to reach an object's first keys).
 */
export function boundedForDump (value: unknown): BoundedValue {
  let left: number = DUMP_LIMITS.maxItems
  let cut = 0
  const queue: Pending[] = []
  const seen = new Map<object, unknown>()

  /** What stands for `child` in its parent's copy: its copy (entries reserved now, in walk order), an elision, or itself. */
  const admit = (child: unknown, depth: number): unknown => {
    const kind = kindOf(child)
    if (kind === undefined || depth > DUMP_LIMITS.maxDepth) return child
    const source = child as object
    const known = seen.get(source)
    if (known !== undefined) return known
    if (left === 0) {
      // the bound is spent: elided unread, as inspect elides what is below its depth
      const elided = new Elided(nameOf(source, kind))
      seen.set(source, elided)
      return elided
    }
    let keys: PropertyKey[] | undefined
    let size: number
    if (kind === 'array') size = (source as unknown[]).length
    else if (kind === 'map' || kind === 'set') size = (source as Map<unknown, unknown> | Set<unknown>).size
    else size = (keys = keysOf(source)).length
    const keep = Math.min(size, DUMP_LIMITS.maxItemsPerDepth, left)
    left -= keep
    cut += size - keep
    const prototype = Object.getPrototypeOf(source) as object | null
    const copy: object = kind === 'array'
      ? []
      : kind === 'map'
        ? Object.setPrototypeOf(new Map(), prototype)
        : kind === 'set' ? Object.setPrototypeOf(new Set(), prototype) : Object.create(prototype)
    const shown = keep < size ? new Cut(copy, kind, size, size - keep) : copy
    seen.set(source, shown)
    queue.push({ source, copy, kind, depth, keep, ...(keys === undefined ? {} : { keys }) })
    return shown
  }

  const root = admit(value, 0)
  for (let next = 0; next < queue.length; next++) {
    const { source, copy, kind, depth, keep, keys } = queue[next]!
    if (kind === 'array') {
      const from = source as unknown[]
      const to = copy as unknown[]
      for (let i = 0; i < keep; i++) if (i in from) to[i] = admit(from[i], depth + 1)
      to.length = keep
    } else if (kind === 'map') {
      let count = 0
      for (const [key, entry] of source as Map<unknown, unknown>) {
        if (count++ === keep) break
        ;(copy as Map<unknown, unknown>).set(admit(key, depth + 1), admit(entry, depth + 1))
      }
    } else if (kind === 'set') {
      let count = 0
      for (const entry of source as Set<unknown>) {
        if (count++ === keep) break
        ;(copy as Set<unknown>).add(admit(entry, depth + 1))
      }
    } else {
      for (const key of keys!.slice(0, keep)) {
        const descriptor = Object.getOwnPropertyDescriptor(source, key)
        if (descriptor === undefined) continue
        // an accessor is copied as one: inspect shows [Getter] without calling it
        if ('value' in descriptor) descriptor.value = admit(descriptor.value, depth + 1)
        Object.defineProperty(copy, key, { ...descriptor, configurable: true })
      }
    }
  }
  return { value: root, items: DUMP_LIMITS.maxItems - left, cut }
}
