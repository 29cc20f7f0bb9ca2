import { REDACTED } from './redact-mark.js'

/**
 * The one rule for secrets in URLs, wherever a URL appears (outgoing calls, log fields, error
 * messages, job data, stored profiles, cURL copies): the credentials of its user-info
 * (`postgres://app:pw@db`, `https://user:pw@host`) and the values of secret query parameters are
 * masked. A parameter is secret when the redaction policy names it (`token`, `key`, `signature`,
 * `auth`…: redact.ts) or when it is one of these, which carry a secret in a URL by convention
 * though their names say nothing of it:
 * - `sig` (Azure SAS, signed links), `hmac` (Shopify and webhook signatures);
 * - `code` (OAuth 2's authorization code) and `code_verifier` (PKCE);
 * - `password`, `X-Amz-Signature`, `X-Amz-Credential`, `X-Amz-Security-Token`, `X-Goog-Signature`,
 *   `access_token`, `id_token`, `refresh_token`, `client_secret`, `api_key` are already the
 *   policy's by their names.
 */
export const SECRET_URL_PARAMETERS: readonly string[] = ['sig', 'hmac', 'code', 'code_verifier']

const SECRET_PARAMETERS = new Set(SECRET_URL_PARAMETERS)

/** `scheme://user:pass@`: the authority's user-info, before any path, query or fragment */
const USER_INFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#@\s]*@/i
/** a URL in free text, to the next space or quote */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi
const PAIR_SEPARATOR = /(&|\r?\n)/

/** Whether a query parameter's (decoded) name is secret in a URL: by the policy, or by SECRET_URL_PARAMETERS. */
function secretParameter (name: string, isSecret: (name: string) => boolean): boolean {
  return SECRET_PARAMETERS.has(name.toLowerCase()) || isSecret(name)
}

/** `a=1&sig=2` (or one pair a line) with the values of secret names masked. */
export function maskPairs (text: string, isSecret: (name: string) => boolean, urlRule = true): string {
  return text.split(PAIR_SEPARATOR).map((pair) => {
    const eq = pair.indexOf('=')
    if (eq === -1) return pair
    const name = pair.slice(0, eq)
    let decoded = name
    try { decoded = decodeURIComponent(name.replace(/\+/g, ' ')) } catch { /* keep the raw name */ }
    const trimmed = decoded.trim()
    return (urlRule ? secretParameter(trimmed, isSecret) : isSecret(trimmed)) ? `${name}=${REDACTED}` : pair
  }).join('')
}

/** A URL with its user-info and the values of its secret query parameters masked (its fragment's too: OAuth's implicit flow puts tokens there). */
export function maskUrl (url: string, isSecret: (name: string) => boolean): string {
  const open = url.replace(USER_INFO, `$1${REDACTED}@`)
  const mark = open.search(/[?#]/)
  if (mark === -1) return open
  return `${open.slice(0, mark + 1)}${open.slice(mark + 1).split('#').map((part) => maskPairs(part, isSecret)).join('#')}`
}

/** Every URL in a text (an error message, a log line, a job's field) masked by maskUrl. */
export function maskUrlsIn (text: string, isSecret: (name: string) => boolean): string {
  if (!text.includes('://')) return text
  return text.replace(URL_IN_TEXT, (url) => maskUrl(url, isSecret))
}
