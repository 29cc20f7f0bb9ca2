/**
 * "Copy as cURL": an outgoing call as a command a developer runs in a terminal, built from what
 * the profile shows (URL, headers and body already masked by the redaction policy: a masked
 * secret reads `******` and is to be filled in by hand).
 */

/**
 * A word for a POSIX shell, in single quotes: nothing in it is interpreted (no `$`, no
 * backquote, no escape), and a quote inside ends the quoting, adds an escaped quote and starts
 * it again, so that no value can break out of its argument. NUL, which no argument can carry,
 * is dropped.
 */
export function shellQuote (value: string): string {
  return `'${value.replace(/\0/g, '').replace(/'/g, '\'\\\'\'')}'`
}

/** Headers curl sets itself from the command (or that a cut or masked body would make wrong). */
const LEFT_OUT = new Set(['content-length', 'host', 'connection', 'transfer-encoding'])

export function curlCommand (method: string, url: string, headers: ReadonlyArray<[string, string]>, body: string | undefined): string {
  const parts = ['curl']
  const upper = method.toUpperCase()
  if (upper === 'HEAD') parts.push('--head')
  else if (upper !== 'GET' || body !== undefined) parts.push('-X', shellQuote(upper))
  parts.push(shellQuote(url))
  let compressed = false
  for (const [name, value] of headers) {
    const lower = name.toLowerCase()
    if (LEFT_OUT.has(lower)) continue
    // curl asks for and decodes them itself
    if (lower === 'accept-encoding') { compressed = true; continue }
    parts.push('-H', shellQuote(`${name}: ${value}`))
  }
  if (compressed) parts.push('--compressed')
  if (body !== undefined) parts.push('--data-raw', shellQuote(body))
  return parts.join(' ')
}
