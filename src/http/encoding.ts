const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#039;' }

/** Escapes text for HTML element content and quoted attributes (PHP's htmlspecialchars with ENT_QUOTES). */
export function escapeHtml (text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c])
}

/** PHP's rawurlencode: everything but `A-Z a-z 0-9 - _ . ~` percent-encoded, so the result is a valid header value. */
export function rawUrlEncode (text: string): string {
  return encodeURIComponent(text.toWellFormed()).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())
}
