/** Whether a path (no query) is one of a list's: exact ones by lookup, the `*` ones by one regular expression. */
export type PathMatcher = (path: string) => boolean

/** `*` stands for any characters, `/` included; everything else is literal. */
export function pathMatcher (patterns: readonly string[]): PathMatcher {
  const exact = new Set(patterns.filter((pattern) => !pattern.includes('*')))
  const wild = patterns.filter((pattern) => pattern.includes('*'))
  if (wild.length === 0) return (path) => exact.has(path)
  const escape = (part: string): string => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')
  const regex = new RegExp(`^(?:${wild.map((pattern) => pattern.split('*').map(escape).join('.*')).join('|')})$`)
  return (path) => exact.has(path) || regex.test(path)
}

/** The path of a request target (`/a/b?x=1` → `/a/b`). */
export function pathOf (url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}
