import Negotiator from 'negotiator'

export type ErrorFormat = 'html' | 'json' | 'problem'

/** The formats Symfony knows by MIME type; the first accepted type with a known format wins. */
const FORMAT_OF_TYPE: Record<string, ErrorFormat | 'other'> = {
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/json': 'json',
  'application/x-json': 'json',
  'application/problem+json': 'problem',
  'text/plain': 'other',
  'application/javascript': 'other',
  'application/x-javascript': 'other',
  'text/javascript': 'other',
  'text/css': 'other',
  'application/ld+json': 'other',
  'text/xml': 'other',
  'application/xml': 'other',
  'application/x-xml': 'other',
  'application/rdf+xml': 'other',
  'application/atom+xml': 'other',
  'application/rss+xml': 'other',
  'application/x-www-form-urlencoded': 'other',
  'multipart/form-data': 'other'
}

const MAX_ACCEPT_ITEMS = 64

// clients repeat the same Accept header: the last answer is kept
let lastAccept: string | undefined
let lastFormat: ErrorFormat = 'html'

/**
 * The error format a client asked for, as Symfony's `Request::getPreferredFormat()` picks it:
 * media ranges by quality (ties keep header order; q=0 ones are not dropped, and types are
 * compared case-sensitively, as Symfony's AcceptHeader and getFormat() do), the first one with a known format wins;
 * only JSON types answer JSON, every other known format and no match at all answer HTML.
 * (negotiator ranks by specificity too, which Symfony does not, so it is not used here.)
 */
export function preferredErrorFormat (accept: string | undefined): ErrorFormat {
  if (accept === undefined || accept === '') return 'html'
  if (accept === lastAccept) return lastFormat
  lastFormat = negotiate(accept)
  lastAccept = accept
  return lastFormat
}

function negotiate (accept: string): ErrorFormat {
  const ranges: Array<{ type: string, q: number, index: number }> = []
  const items = accept.split(',', MAX_ACCEPT_ITEMS)
  for (let index = 0; index < items.length; index++) {
    const [type, ...params] = items[index].split(';')
    let q = 1
    for (const param of params) {
      const [key, value] = param.split('=')
      if (key.trim().toLowerCase() === 'q') q = Number.parseFloat(value) || 0
    }
    // as Symfony's AcceptHeader: q=0 ranges are kept (sorted last), types compared as sent
    const mediaType = type.trim()
    if (mediaType !== '') ranges.push({ type: mediaType, q, index })
  }
  ranges.sort((a, b) => b.q - a.q || a.index - b.index)
  for (const range of ranges) {
    const format = FORMAT_OF_TYPE[range.type]
    if (format === 'other') return 'html'
    if (format !== undefined) return format
  }
  return 'html'
}

const PROBLEM_FIRST = ['application/problem+json', 'application/json'] as const
let lastProblemAccept: string | undefined
let lastProblem = true

/**
 * Whether a client getting a problem-details body takes it as `application/problem+json`
 * (RFC 9457) rather than `application/json`: it accepts it at least as much, as negotiator ranks
 * them (quality, then the most specific range, then the header's order). No `Accept`, any type
 * and `application/*` take it; `application/json` alone, or first, does not.
 */
export function acceptsProblemJson (accept: string | undefined): boolean {
  if (accept === lastProblemAccept) return lastProblem
  const ranges = accept === undefined ? undefined : accept.split(',', MAX_ACCEPT_ITEMS).join(',')
  lastProblem = new Negotiator({ headers: { accept: ranges } }).mediaType(PROBLEM_FIRST) === PROBLEM_FIRST[0]
  lastProblemAccept = accept
  return lastProblem
}

/**
 * The format of an error response once a route or the app imposed one (Symfony's `_format`,
 * which wins over `Accept`): `Accept` only still picks problem+json among the JSON formats.
 */
export function imposedErrorFormat (accepted: ErrorFormat, imposed: 'html' | 'json' | undefined): ErrorFormat {
  if (imposed === undefined) return accepted
  if (imposed === 'html') return 'html'
  return accepted === 'problem' ? 'problem' : 'json'
}
