import HandlebarsNs from 'handlebars'

/**
 * Where a statement may wrap besides its spaces: after a comma, an opening parenthesis or an
 * equals sign, and at the dot of a qualified name (`books.title`) — never inside a word or a
 * number (`42.5` keeps its dot).
 */
const TOKEN_BOUNDARY = /[,(=]|(?<=[\w"\x60\]])\.(?=[A-Za-z_"\x60[])/g

/**
 * A statement as HTML, escaped, with a soft break (`<wbr>`) at each of its token boundaries that
 * no space follows: a long SQL line wraps between tokens, not in the middle of a name.
 */
export function breakableStatement (value: unknown): HandlebarsNs.SafeString {
  const text = typeof value === 'string' ? value : String(value ?? '')
  const escape = HandlebarsNs.Utils.escapeExpression
  let html = ''
  let from = 0
  for (const match of text.matchAll(TOKEN_BOUNDARY)) {
    const end = match.index + match[0].length
    if (end >= text.length || /\s/.test(text[end]!)) continue
    html += `${escape(text.slice(from, end))}<wbr>`
    from = end
  }
  return new HandlebarsNs.SafeString(html + escape(text.slice(from)))
}

/** Helpers of the kernel's templates; each returns escaped text unless it builds no markup. */
const HELPERS: Record<string, (...args: never[]) => unknown> = {
  eq: (a: unknown, b: unknown) => a === b,
  gt: (a: unknown, b: unknown) => Number(a) > Number(b),
  json: (value: unknown) => JSON.stringify(value, null, 2) ?? '',
  ms: (value: unknown) => (typeof value === 'number' ? value.toFixed(2) : '0.00'),
  sql: breakableStatement,
  statusClass: (status: unknown) => {
    const s = Number(status)
    return s >= 500 ? 'status-error' : s >= 400 ? 'status-warning' : s >= 300 ? 'status-redirect' : 'status-success'
  }
}

/** Their names, for the compiler's `knownHelpers`. */
export const TEMPLATE_HELPERS: readonly string[] = Object.keys(HELPERS)

export function registerTemplateHelpers (handlebars: typeof HandlebarsNs): void {
  for (const [name, helper] of Object.entries(HELPERS)) handlebars.registerHelper(name, helper as HandlebarsNs.HelperDelegate)
}
