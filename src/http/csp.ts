import { randomString } from '../random-pool.js'

/** Nonces of the inline `<script>` and `<style>` elements the kernel adds to a page. */
export interface CspNonces {
  script: string
  style: string
}

/** Headers that carry a policy, as Symfony's ContentSecurityPolicyHandler reads them. */
export const CSP_HEADERS = ['content-security-policy', 'content-security-policy-report-only', 'x-content-security-policy'] as const

const DIRECTIVES: Array<[string, keyof CspNonces]> = [
  ['script-src', 'script'],
  ['script-src-elem', 'script'],
  ['style-src', 'style'],
  ['style-src-elem', 'style']
]

/** 128 random bits each from the cryptographic RNG, base64url (valid in a policy, and nothing to escape in HTML). */
export function generateNonces (): CspNonces {
  return { script: randomString(16, 'base64url'), style: randomString(16, 'base64url') }
}

type Directives = Map<string, string[]>

function parse (policy: string): Directives {
  const directives: Directives = new Map()
  for (const part of policy.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/)
    if (name !== undefined && name !== '' && !directives.has(name.toLowerCase())) directives.set(name.toLowerCase(), sources)
  }
  return directives
}

function serialize (directives: Directives): string {
  return [...directives].map(([name, sources]) => [name, ...sources].join(' ')).join('; ')
}

function hasHashOrNonce (sources: readonly string[]): boolean {
  return sources.some((source) => /^'(nonce-|sha256-|sha384-|sha512-)/i.test(source))
}

/** The directive the browser falls back on: `default-src` for `script-src` and `style-src`; the `-elem` ones fall back on their own. */
function fallback (directives: Directives, name: string): string[] | undefined {
  return name.endsWith('-elem') ? undefined : directives.get('default-src')
}

/** Inline code runs anyway: `'unsafe-inline'` with no nonce or hash (which would switch it off). */
function allowsInline (directives: Directives, name: string): boolean {
  const sources = directives.get(name) ?? fallback(directives, name)
  return sources !== undefined && sources.includes("'unsafe-inline'") && !hasHashOrNonce(sources)
}

/**
 * One policy with the kernel's nonces allowed, as Symfony's ContentSecurityPolicyHandler
 * rewrites it: each of `script-src`, `script-src-elem`, `style-src`, `style-src-elem` that
 * restricts inline code (directly, or through `default-src`) gets `'nonce-…'`, plus
 * `'unsafe-inline'` for browsers too old for nonces (newer ones ignore it beside a nonce).
 * A directive allowing inline code already is left alone: a nonce there would forbid the
 * page's own inline code. Returns the policy unchanged when nothing restricts inline code.
 */
export function allowNonces (policy: string, nonces: CspNonces): string {
  const directives = parse(policy)
  let changed = false
  for (const [name, kind] of DIRECTIVES) {
    if (allowsInline(directives, name)) continue
    let sources = directives.get(name)
    if (sources === undefined) {
      const inherited = fallback(directives, name)
      if (inherited === undefined) continue
      sources = [...inherited]
      directives.set(name, sources)
    }
    // 'none' must stand alone in a source list
    if (sources.length === 1 && sources[0] === "'none'") sources.length = 0
    const nonce = `'nonce-${nonces[kind]}'`
    if (sources.includes(nonce)) continue
    if (!sources.includes("'unsafe-inline'")) sources.push("'unsafe-inline'")
    sources.push(nonce)
    changed = true
  }
  return changed ? serialize(directives) : policy
}

/** A header value that may hold several policies (a list, or comma-separated), each rewritten. */
export function allowNoncesInHeader (value: string | string[], nonces: CspNonces): string | string[] {
  if (Array.isArray(value)) return value.map((item) => allowNoncesInHeader(item, nonces) as string)
  return value.split(',').map((policy) => allowNonces(policy.trim(), nonces)).join(', ')
}
