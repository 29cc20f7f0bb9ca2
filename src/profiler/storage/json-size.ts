/** The most characters a number takes in JSON (`-1.2345678901234567e-300`). */
const NUMBER_CHARS = 24

/**
 * An upper bound of `JSON.stringify(value).length` for plain data, without building the string:
 * a walk that counts each string's characters plus its quotes, each key with its quotes and
 * colon, every number at its longest, and one separator per member. About a fifth of what
 * serialising costs (no number is formatted, no string copied). A string with characters JSON
 * escapes counts them once, not as their escape: profiles are masked, cut text; the memory
 * storage's byte bound is an estimate, not an allocator.
 */
export function jsonSizeBound (value: unknown): number {
  switch (typeof value) {
    case 'string': return value.length + 2
    case 'number': return NUMBER_CHARS
    case 'boolean': return 5
    case 'object': {
      if (value === null) return 4
      let size = 2
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) size += jsonSizeBound(value[i]) + 1
        return size
      }
      for (const key in value) {
        const member = (value as Record<string, unknown>)[key]
        if (member !== undefined) size += key.length + 4 + jsonSizeBound(member)
      }
      return size
    }
    default: return 0
  }
}
