import type { IncomingHttpHeaders } from 'node:http'

/**
 * Whether a request that changes something or runs something (the profiler's EXPLAIN) comes
 * from the profiler's own pages, not from another site the developer has open: a browser tells
 * where a request comes from in `Sec-Fetch-Site` (every current browser) and `Origin` (every
 * browser, on every cross-origin POST). Either one naming another site refuses it (the first
 * when sent, the second else); a client
 * that sends neither is no browser, and so no cross-site forgery (curl, a test). Which hosts may
 * reach the profiler at all is the access rules' affair (a DNS-rebound name is no local host).
 */
export function isSameOrigin (headers: IncomingHttpHeaders): boolean {
  // a page can set neither header; Sec-Fetch-Site decides when sent: a page whose policy is
  // `Referrer-Policy: no-referrer` (helmet's default) posts with `Origin: null`, same-origin though it is
  const site = headers['sec-fetch-site']
  if (site !== undefined) return site === 'same-origin'
  const origin = headers.origin
  if (origin === undefined) return true
  const host = headers.host
  if (origin === 'null' || host === undefined) return false
  try {
    return new URL(origin).host.toLowerCase() === host.toLowerCase()
  } catch {
    return false
  }
}
