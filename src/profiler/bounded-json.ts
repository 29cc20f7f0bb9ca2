/**
 * JSON cut to a size: what the profiler hands an agent or a script is bounded in bytes, and says
 * where it was cut. Lists lose their tail first (the longest list, halved, again and again), then
 * long strings theirs; each cut is named by its path (`panel.data.statements: 120 of 480 kept`).
 */
export interface Bounded<T> {
  value: T
  /** bytes of the JSON given */
  bytes: number
  /** where it was cut; empty when nothing was */
  cuts: string[]
}

/** Strings are cut to this many characters at the least. */
const MIN_STRING = 256
const CUT_MARK = /… \(\d+ more characters\)$/

interface Found { path: string, holder: unknown[] | Record<string, unknown>, key: number | string, size: number }

function walk (value: unknown, path: string, visit: (found: Omit<Found, 'size'> & { value: unknown }) => void, holder?: unknown[] | Record<string, unknown>, key?: number | string): void {
  if (holder !== undefined && key !== undefined) visit({ path, holder, key, value })
  if (Array.isArray(value)) value.forEach((item, index) => { walk(item, `${path}[${index}]`, visit, value, index) })
  else if (typeof value === 'object' && value !== null) for (const [name, item] of Object.entries(value)) walk(item, path === '' ? name : `${path}.${name}`, visit, value as Record<string, unknown>, name)
}

function largest (root: unknown, kind: 'array' | 'string'): Found | undefined {
  let best: Found | undefined
  walk(root, '', ({ path, holder, key, value }) => {
    const size = kind === 'array' ? (Array.isArray(value) ? value.length : -1) : (typeof value === 'string' ? value.length : -1)
    if (size > (kind === 'array' ? 1 : MIN_STRING + 32) && (best === undefined || size > best.size)) best = { path, holder, key, size }
  })
  return best
}

/** Bytes of `value` as JSON (UTF-8). */
export function jsonBytes (value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '')
}

/**
 * A copy of `value` whose JSON is at most `maxBytes` (for any value a JSON document of that size
 * can hold: a cap under a few hundred bytes may not be met by scalars alone).
 */
export function boundJson<T> (value: T, maxBytes: number): Bounded<T> {
  let bytes = jsonBytes(value)
  if (bytes <= maxBytes) return { value, bytes, cuts: [] }
  const copy = JSON.parse(JSON.stringify(value)) as T
  const kept = new Map<string, { kept: number, of: number }>()
  for (let round = 0; round < 200 && bytes > maxBytes; round++) {
    const list = largest(copy, 'array')
    if (list !== undefined) {
      const items = (list.holder as Record<string | number, unknown[]>)[list.key]!
      const path = list.path.replace(/\[\d+\]/g, '[]')
      const before = kept.get(path)
      items.length = Math.max(1, Math.floor(items.length / 2))
      kept.set(path, { kept: items.length, of: before?.of ?? list.size })
    } else {
      const text = largest(copy, 'string')
      if (text === undefined) break
      const holder = text.holder as Record<string | number, string>
      const prior = kept.get(text.path)
      const current = prior === undefined ? holder[text.key]! : holder[text.key]!.replace(CUT_MARK, '')
      const total = prior?.of ?? current.length
      const keep = Math.max(MIN_STRING, Math.floor(current.length / 2))
      if (keep >= current.length) break
      holder[text.key] = `${current.slice(0, keep)}… (${total - keep} more characters)`
      kept.set(text.path, { kept: keep, of: total })
    }
    bytes = jsonBytes(copy)
  }
  const cuts = [...kept].map(([path, { kept: count, of }]) => `${path}: ${count} of ${of} kept`)
  return { value: copy, bytes, cuts }
}
