/** Parameters of a route match, decoded, by name. */
export type RouteParams = Record<string, string | undefined>

/** A Fastify route path read as Symfony shows a route: placeholders, and each requirement. */
export interface ParsedPattern {
  /** `/items/{id}` */
  display: string
  /** the route without its requirements: `/items/:id` */
  loose: string
  /** parameters with an explicit regular expression (`:id(^\\d+$)`), in path order */
  requirements: Array<{ name: string, source: string }>
  /** every named parameter, in path order (the wildcard `*` is not one) */
  parameters: string[]
}

const NAME_CHAR = /[A-Za-z0-9_$]/

/**
 * Reads a Fastify route path: `:name`, `:name(regex)` (the regex may nest parentheses),
 * `::` (a literal colon) and `*`. Gives the display form, the form without requirements, the
 * requirements and the parameter names.
 */
export function parsePattern (url: string): ParsedPattern {
  let display = ''
  let loose = ''
  const requirements: ParsedPattern['requirements'] = []
  const parameters: string[] = []
  for (let i = 0; i < url.length;) {
    const c = url[i]
    if (c === ':' && url[i + 1] === ':') { display += ':'; loose += '::'; i += 2; continue }
    if (c === ':') {
      let end = i + 1
      while (end < url.length && NAME_CHAR.test(url[end])) end++
      const name = url.slice(i + 1, end)
      parameters.push(name)
      display += `{${name}}`
      loose += `:${name}`
      i = end
      if (url[i] === '(') {
        let depth = 0
        let j = i
        for (; j < url.length; j++) {
          if (url[j] === '\\') { j++; continue }
          if (url[j] === '(') depth++
          else if (url[j] === ')' && --depth === 0) break
        }
        requirements.push({ name, source: url.slice(i + 1, j) })
        i = j + 1
      }
      continue
    }
    if (c === '*') { display += '{*}'; loose += '*'; i++; continue }
    display += c
    loose += c
    i++
  }
  return { display, loose, requirements, parameters }
}

// route paths come from the application's own definitions, never from clients: a bounded set
const withRequirement = new Map<string, ReadonlySet<string>>()

function parametersWithRequirement (url: string): ReadonlySet<string> {
  let names = withRequirement.get(url)
  if (names === undefined) {
    names = new Set(parsePattern(url).requirements.map(({ name }) => name))
    withRequirement.set(url, names)
  }
  return names
}

/**
 * The parameter of a match that Symfony's default requirement (`[^/]+`: one or more
 * characters) refuses: an empty value of a parameter without a requirement of its own.
 * find-my-way matches `/hello/` to `/hello/:name` with `name = ''`; Symfony does not.
 * A parameter with an explicit regular expression (Fastify already tested it against the
 * value) and the wildcard `*` keep their own rule. `url` is the route's path; without it
 * (a route the kernel has not learnt yet) every named parameter has the default requirement.
 */
export function emptyParameter (url: string | undefined, params: RouteParams): string | undefined {
  for (const name in params) {
    if (params[name] !== '' || name === '*') continue
    if (url !== undefined && parametersWithRequirement(url).has(name)) continue
    return name
  }
  return undefined
}
