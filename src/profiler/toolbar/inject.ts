import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * A response header by which one response opts out of the toolbar (`reply.header('X-Debug-Toolbar', 'off')`);
 * the kernel removes it before the response leaves.
 */
export const TOOLBAR_OPT_OUT_HEADER = 'x-debug-toolbar'

/**
 * A response header by which a fetch()/XHR response says it is the page's new view: the toolbar
 * then shows its profile (Symfony's `Symfony-Debug-Toolbar-Replace`); set on every such response
 * with `profiler: { toolbar: { ajaxReplace: true } }`.
 */
export const TOOLBAR_REPLACE_HEADER = 'x-debug-toolbar-replace'

/** A request made by a page's script (fetch, XMLHttpRequest, htmx), not a navigation nor an asset's load. */
export function isScriptRequest (request: FastifyRequest): boolean {
  const headers = request.headers
  return headers['x-requested-with'] === 'XMLHttpRequest' || headers['hx-request'] === 'true' || headers['sec-fetch-dest'] === 'empty'
}

const CLOSING_BODY = '</body>'

/** Offset of the last `</body>` (any case) in an HTML text, or -1. */
export function lastClosingBody (html: string): number {
  let from = html.length
  for (;;) {
    const at = html.lastIndexOf('</', from)
    if (at === -1) return -1
    if (html.slice(at, at + CLOSING_BODY.length).toLowerCase() === CLOSING_BODY) return at
    from = at - 1
    if (from < 0) return -1
  }
}

/**
 * Where Symfony's WebDebugToolbarListener injects the toolbar: the main HTML response of a
 * non-XHR request that is no redirect and no attachment. Streams and bodies already encoded
 * (`Content-Encoding`) cannot be edited, so they are left alone too. `</body>` is checked by
 * `injectToolbar`.
 */
export function acceptsToolbar (request: FastifyRequest, reply: FastifyReply, payload: unknown): boolean {
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return false
  if (reply.statusCode >= 300 && reply.statusCode < 400) return false
  if (request.headers['x-requested-with'] === 'XMLHttpRequest') return false
  const type = reply.getHeader('content-type')
  if (typeof type !== 'string' || !type.toLowerCase().includes('html')) return false
  if (reply.getHeader('content-encoding') !== undefined) return false
  const disposition = reply.getHeader('content-disposition')
  return !(typeof disposition === 'string' && /^\s*attachment\b/i.test(disposition))
}

/**
 * The payload with the snippet before its last `</body>`, or undefined when it has none (the
 * snippet is made only then). A
 * Buffer is read as latin1 (one character a byte) so that any ASCII-compatible charset comes
 * back byte for byte; the snippet is ASCII.
 */
export function injectToolbar (payload: string | Buffer, snippet: () => string): string | Buffer | undefined {
  const html = typeof payload === 'string' ? payload : payload.toString('latin1')
  const at = lastClosingBody(html)
  if (at === -1) return undefined
  const injected = `${html.slice(0, at)}\n${snippet()}\n${html.slice(at)}`
  return typeof payload === 'string' ? injected : Buffer.from(injected, 'latin1')
}
