import { REDACTED } from './redact-mark.js'
import { maskPairs, maskUrl, maskUrlsIn } from './url-secrets.js'

export { REDACTED }

/**
 * Names of secret fields, headers and query parameters (case-insensitive): the one list that
 * logs, debug pages, profiles, the toolbar and the console mask.
 * - Anywhere in a name: `token`, `secret`, `passw` (password, passwd), `passphrase`, `pwd`,
 *   `key`, `csrf`, `jwt`, `session`, `signature`, `credential`.
 * - `auth` anywhere (`auth`, `oauth_code`, `x-auth-user`, `authorization`, `authentication`),
 *   except in `author…` (`author`, `authority`: no secrets, and common query names) and the
 *   security panel's own `authenticated` and `authenticator` (a flag, a method's name).
 * - `pass`, `pin` and `pincode` only as a whole word of the name (`pass`, `user_pin`, `x-pin`,
 *   `pin-code`): as substrings they are in `passenger`, `shipping`, `spinner`, `mapping`.
 */
export const DEFAULT_REDACT_PATTERN = 'token|secret|passw|passphrase|pwd|key|csrf|jwt|session|signature|credential|' +
  'auth(?!or(?!i[sz])|enticated|enticator)|(^|[-_.\\s])(pass|pin|pincode)($|[-_.\\s])'

/** Headers that always carry credentials, whatever their name says. */
const SECRET_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie']
/** The profiler's own headers name a token but are no secret. */
const NEVER_REDACTED = new Set(['x-debug-token', 'x-debug-token-link'])

const MAX_DEPTH = 6
const MAX_KEYS = 200
export const MAX_STRING = 4096

/** Cuts a long string, saying how much was left out. */
export function truncate (text: string, max = MAX_STRING): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`
}

/** `name=value` pairs joined by `&` (URL-encoded) or by line breaks (a `text/plain` form). */
const PAIRS = /^[^=\s&]+=/

/**
 * The one redaction policy of the debug error page and the profiler: credential headers by
 * name, and any header, query, body or log field whose name matches the pattern (tokens,
 * secrets, passwords, keys, pins by default) are masked before anything shows or stores them.
 */
export class Redactor {
  private readonly names: Set<string>

  constructor (extraNames: readonly string[] = [], private readonly pattern = new RegExp(DEFAULT_REDACT_PATTERN, 'i')) {
    this.names = new Set([...SECRET_HEADERS, ...extraNames.map((n) => n.toLowerCase())])
  }

  /** the same few header and field names come back on every request */
  private readonly verdicts = new Map<string, boolean>()

  isSecret (name: string): boolean {
    let verdict = this.verdicts.get(name)
    if (verdict === undefined) {
      const lower = name.toLowerCase()
      verdict = !NEVER_REDACTED.has(lower) && (this.names.has(lower) || this.pattern.test(name))
      if (this.verdicts.size >= 1024) this.verdicts.clear()
      this.verdicts.set(name, verdict)
    }
    return verdict
  }

  private readonly secret = (name: string): boolean => this.isSecret(name)

  /**
   * A URL with its user-info (`https://user:pass@host`, `postgres://app:pw@db`) and the values of
   * secret query parameters (`?api_key=******`, `?sig=******`: url-secrets.ts) masked.
   */
  url (url: string): string {
    return maskUrl(url, this.secret)
  }

  /** A free text (an error message, a log message) with every URL in it masked as `url()` does. */
  message (text: string): string {
    return maskUrlsIn(text, this.secret)
  }

  /** `a=1&password=2` (or one pair a line) with the values of secret names masked. */
  private pairs (text: string): string {
    return maskPairs(text, this.secret, false)
  }

  /**
   * A request body that arrived as text (`text/plain`, or a type no parser read): JSON and
   * `name=value` pairs have their secret fields masked; any other text that names a secret
   * (`password` in a free-form body) is masked whole, since its structure is unknown. Cut at
   * `max` characters.
   */
  text (body: string, max = MAX_STRING): string {
    const trimmed = body.trim()
    if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
      try { return truncate(JSON.stringify(this.value(JSON.parse(trimmed))), max) } catch { /* not JSON */ }
    }
    if (PAIRS.test(trimmed)) return truncate(this.pairs(body), max)
    return this.pattern.test(body) ? `${REDACTED} (${body.length} characters, masked: the text names a secret)` : truncate(body, max)
  }

  /** A header list with secret values masked and long values cut. */
  headers (pairs: Iterable<[string, string]>): Array<[string, string]> {
    const out: Array<[string, string]> = []
    for (const [name, value] of pairs) out.push([name, this.isSecret(name) ? REDACTED : truncate(value)])
    return out
  }

  /**
   * A JSON-safe copy of any value with secret fields masked: cycles cut, depth and size bounded,
   * errors as `{ type, message }`, anything unserialisable as a description.
   */
  value (input: unknown, depth = 0, seen = new Set<unknown>()): unknown {
    if (input === null || typeof input === 'boolean' || typeof input === 'number') return Number.isFinite(input as number) || typeof input !== 'number' ? input : String(input)
    if (typeof input === 'string') return truncate(maskUrlsIn(input, this.secret))
    if (typeof input === 'bigint') return `${input.toString()}n`
    if (typeof input === 'undefined') return null
    if (typeof input === 'function') return `[function ${input.name || 'anonymous'}]`
    if (typeof input === 'symbol') return input.toString()
    if (seen.has(input)) return '[circular]'
    if (depth >= MAX_DEPTH) return '[…]'
    if (input instanceof Error) return { type: input.constructor?.name ?? 'Error', message: truncate(this.message(input.message)) }
    if (input instanceof Date) return input.toISOString()
    if (Buffer.isBuffer(input)) return `[${input.length} bytes]`
    seen.add(input)
    try {
      if (Array.isArray(input)) return input.slice(0, MAX_KEYS).map((item) => this.value(item, depth + 1, seen))
      const out: Record<string, unknown> = {}
      let count = 0
      for (const key of Object.keys(input as object)) {
        if (count++ >= MAX_KEYS) { out['…'] = 'more keys left out'; break }
        let item: unknown
        try { item = (input as Record<string, unknown>)[key] } catch { item = '[unreadable]' }
        out[key] = this.isSecret(key) ? REDACTED : this.value(item, depth + 1, seen)
      }
      return out
    } finally {
      seen.delete(input)
    }
  }
}
