/** Whether a request target (`/a/b`, `/a/b?x=1`) is one a list names, by its path (the query is not read). */
export type PathMatcher = (target: string) => boolean

/**
 * `*` stands for any characters of the path, `/` included; everything else is literal. One
 * regular expression tested on the target as it arrived (no string sliced per request): the
 * path, then the end or the query.
 */
export function pathMatcher (patterns: readonly string[]): PathMatcher {
  const escape = (part: string): string => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')
  const regex = new RegExp(`^(?:${patterns.map((pattern) => pattern.split('*').map(escape).join('[^?#]*')).join('|')})(?:[?#]|$)`)
  return (target) => regex.test(target)
}
