const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#039;' }

/** Escapes text for HTML element content and quoted attributes (PHP's htmlspecialchars with ENT_QUOTES). */
export function escapeHtml (text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c])
}

/** PHP's rawurlencode: everything but `A-Z a-z 0-9 - _ . ~` percent-encoded, so the result is a valid header value. */
export function rawUrlEncode (text: string): string {
  return encodeURIComponent(text.toWellFormed()).replace(/[!'()*]/g, (c) => RAW_URL_ESCAPES[c])
}

/** What encodeURIComponent leaves and rawurlencode does not. */
const RAW_URL_ESCAPES: Record<string, string> = { '!': '%21', "'": '%27', '(': '%28', ')': '%29', '*': '%2A' }

const UTF8 = new TextDecoder('utf-8', { fatal: true })

/**
 * A header value as the client wrote it: Node hands header bytes over as latin-1, so bytes that
 * form valid UTF-8 (`café` sent raw) are read back as UTF-8, as PHP would see them.
 */
export function headerText (value: string | string[] | undefined): string | undefined {
  if (typeof value !== 'string') return undefined
  if (!/[\x80-\xff]/.test(value)) return value
  try {
    return UTF8.decode(Buffer.from(value, 'latin1'))
  } catch {
    return value
  }
}
