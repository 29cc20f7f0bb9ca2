/**
 * Reads the `Authorization` header. Hostile input ends as `malformed`, never as an exception:
 * the firewall answers it with the same 401 as wrong credentials.
 */
export type Credentials =
  | { scheme: 'basic', username: string, password: string }
  | { scheme: 'bearer', token: string }
  | { scheme: 'basic' | 'bearer', malformed: string }
  /** another scheme (Digest, Negotiate...): no authenticator here supports it */
  | { scheme: 'other' }

/** Longer headers are refused before any decoding: no credential of ours is near this size. */
export const MAX_AUTHORIZATION_LENGTH = 8192
/** Symfony's limit on user identifiers. */
export const MAX_USERNAME_LENGTH = 4096

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/
// RFC 6750 b64token
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/

export function parseAuthorization (header: string): Credentials {
  const space = header.indexOf(' ')
  const scheme = (space === -1 ? header : header.slice(0, space)).toLowerCase()
  if (scheme !== 'basic' && scheme !== 'bearer') return { scheme: 'other' }
  if (header.length > MAX_AUTHORIZATION_LENGTH) return { scheme, malformed: 'header too long' }
  const value = space === -1 ? '' : header.slice(space + 1).trim()
  if (value === '') return { scheme, malformed: 'no credentials' }
  if (scheme === 'bearer') {
    return B64TOKEN.test(value) ? { scheme, token: value } : { scheme, malformed: 'not a b64token' }
  }
  if (value.length % 4 !== 0 || !BASE64.test(value)) return { scheme, malformed: 'bad base64' }
  const decoded = Buffer.from(value, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon === -1) return { scheme, malformed: 'no colon' }
  const username = decoded.slice(0, colon)
  if (username === '' || username.length > MAX_USERNAME_LENGTH) return { scheme, malformed: 'bad username length' }
  return { scheme, username, password: decoded.slice(colon + 1) }
}
