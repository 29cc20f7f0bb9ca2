/**
 * This many statements of one shape with different parameters are flagged as a likely N+1
 * (a query per item of a list that one query could have fetched).
 */
export const N_PLUS_ONE = 3

/**
 * The same call made over and over, each time for another item: a Redis command on one key
 * pattern, an HTTP call to one URL shape. Ids in keys and paths (numbers, UUIDs, long hex or
 * ULID tokens) are taken out, so that `GET book:1`, `GET book:2`… are one shape, `GET book:{id}`,
 * as the Database panel's "similar" statements are one shape with their values taken out.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi
/** a MongoDB ObjectId, a hash, a hex id: 8 hex characters or more, a digit among them */
const HEX_ID = /^(?=[^0-9]*[0-9])[0-9a-f]{8,}$/i
/** a ULID or a similar sortable id: 20 characters or more of letters and digits, digits among them */
const LONG_ID = /^(?=.*[0-9])(?=.*[A-Za-z])[0-9A-Za-z]{20,}$/
const NUMBER = /^-?\d+(?:\.\d+)?$/

/** Whether one token of a key or one path segment is an id rather than a name. */
export function isId (token: string): boolean {
  return NUMBER.test(token) || UUID.test(token) || HEX_ID.test(token) || LONG_ID.test(token)
}

/** A Redis key with its ids taken out: `book:42:reviews` → `book:{id}:reviews`. */
export function keyShape (key: string): string {
  return key.replace(UUIDS, '{id}').split(/([:/.|#_-])/).map((token, index) => index % 2 === 0 && isId(token) ? '{id}' : token).join('')
}

/**
 * An URL with its ids taken out of the path and its query's values: `GET https://api/books/42?lang=fr` →
 * `https://api/books/{id}?lang=`. Unparseable: as it is.
 */
export function urlShape (url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return url
  }
  const path = parsed.pathname.split('/').map((segment) => segment !== '' && isId(decodeURIComponent(segment)) ? '{id}' : segment).join('/')
  const names = [...new Set([...parsed.searchParams.keys()])].sort()
  return `${parsed.origin}${path}${names.length === 0 ? '' : `?${names.map((name) => `${name}=`).join('&')}`}`
}

export interface Repeated {
  shape: string
  count: number
  /** how many different calls (keys, URLs) made the shape */
  variants: number
  totalMs: number
}

/** The shapes made `min` times or more, most frequent first. */
export function repeatedShapes<T extends { duration: number | null }> (calls: readonly T[], shapeOf: (call: T) => string, variantOf: (call: T) => string, min: number): Repeated[] {
  const groups = new Map<string, { count: number, variants: Set<string>, totalMs: number }>()
  for (const call of calls) {
    const shape = shapeOf(call)
    let group = groups.get(shape)
    if (group === undefined) groups.set(shape, group = { count: 0, variants: new Set(), totalMs: 0 })
    group.count++
    group.variants.add(variantOf(call))
    group.totalMs += call.duration ?? 0
  }
  return [...groups]
    .filter(([, group]) => group.count >= min)
    .map(([shape, group]) => ({ shape, count: group.count, variants: group.variants.size, totalMs: Math.round(group.totalMs * 1000) / 1000 }))
    .sort((a, b) => b.count - a.count)
}
