/**
 * The request path in the form find-my-way matches the way Symfony's matcher does.
 *
 * Symfony matches `rawurldecode($path)`: every escape is decoded, `%2F` included, and an
 * escape that does not decode (`%zz`, bytes that are not UTF-8) stays as it was written.
 * find-my-way decodes every escape but `%2F` (and the other reserved characters, which it
 * decodes inside parameters) and refuses a path with a malformed escape. So `%2F` becomes a
 * `/` here, and the `%` of an escape that cannot be decoded becomes `%25`, which find-my-way
 * decodes back to the text as written: `/hello/%zz` matches `/hello/:name` with `name = '%zz'`.
 */
export function routingPath (path: string): string {
  let percent = path.indexOf('%')
  if (percent === -1) return path
  let out = ''
  let from = 0
  while (percent !== -1) {
    const run = escapeRun(path, percent)
    if (run.end === percent) {
      // a `%` not followed by two hex digits
      out += path.slice(from, percent) + '%25'
      from = percent + 1
    } else {
      out += path.slice(from, percent) + decodableRun(path.slice(percent, run.end), run.bytes)
      from = run.end
    }
    percent = path.indexOf('%', from)
  }
  return out + path.slice(from)
}

function hexValue (code: number): number {
  if (code >= 48 && code <= 57) return code - 48
  const lower = code | 32
  if (lower >= 97 && lower <= 102) return lower - 87
  return -1
}

/** The consecutive `%XX` escapes starting at `start`, and their bytes. */
function escapeRun (path: string, start: number): { end: number, bytes: number[] } {
  const bytes: number[] = []
  let i = start
  while (path.charCodeAt(i) === 37 /* % */) {
    const high = hexValue(path.charCodeAt(i + 1))
    const low = hexValue(path.charCodeAt(i + 2))
    if (high === -1 || low === -1) break
    bytes.push(high * 16 + low)
    i += 3
  }
  return { end: i, bytes }
}

/** Length of the well-formed UTF-8 sequence starting at `bytes[i]`, or 0 (RFC 3629 table). */
function utf8SequenceLength (bytes: number[], i: number): number {
  const b0 = bytes[i]
  if (b0 < 0x80) return 1
  let length: number
  let min = 0x80
  let max = 0xbf
  if (b0 >= 0xc2 && b0 <= 0xdf) length = 2
  else if (b0 >= 0xe0 && b0 <= 0xef) {
    length = 3
    if (b0 === 0xe0) min = 0xa0
    else if (b0 === 0xed) max = 0x9f
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    length = 4
    if (b0 === 0xf0) min = 0x90
    else if (b0 === 0xf4) max = 0x8f
  } else return 0
  if (i + length > bytes.length) return 0
  if (bytes[i + 1] < min || bytes[i + 1] > max) return 0
  for (let k = 2; k < length; k++) if (bytes[i + k] < 0x80 || bytes[i + k] > 0xbf) return 0
  return length
}

/** A run of escapes with `%2F` decoded and the bytes that are not UTF-8 kept as text. */
function decodableRun (text: string, bytes: number[]): string {
  let out = ''
  for (let i = 0; i < bytes.length;) {
    const length = utf8SequenceLength(bytes, i)
    if (length === 0) {
      out += '%25' + text.slice(i * 3 + 1, i * 3 + 3)
      i++
    } else {
      out += bytes[i] === 0x2f ? '/' : text.slice(i * 3, (i + length) * 3)
      i += length
    }
  }
  return out
}

/** `/blog//` → `/blog/`: a path's trailing slashes, however many, as one. */
export function collapseTrailingSlashes (path: string): string {
  let end = path.length
  while (end > 1 && path.charCodeAt(end - 1) === 47 && path.charCodeAt(end - 2) === 47) end--
  return end === path.length ? path : path.slice(0, end)
}
