import type { CspNonces } from '../../http/csp.js'

/**
 * The Content-Security-Policy of the profiler's own pages, sent whatever the app's policy is (none,
 * helmet's, a looser one): nothing is loaded from anywhere but the profiler itself. Its scripts by
 * nonce; inline styles allowed (the pages' own carry a nonce and no style attribute, but a mail's
 * HTML keeps its own styles in its frame: CSS can fetch nothing that img-src and font-src refuse);
 * images from the profiler and `data:`; forms and frames to itself; no `<base>`; never framed by
 * another site.
 *
 * A mail's HTML is shown in a sandboxed `srcdoc` frame, which inherits this policy: its remote
 * images (tracking pixels), stylesheets, fonts and frames are not fetched.
 */
export function profilerPagePolicy (nonces: CspNonces): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonces.script}'`,
    'style-src \'self\' \'unsafe-inline\'',
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "frame-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'self'"
  ].join('; ')
}

/** Every header that carries a policy the app may have set (replaced or removed on the profiler's pages). */
export const POLICY_HEADERS = ['content-security-policy', 'content-security-policy-report-only', 'x-content-security-policy'] as const
