/** A problem that stops a command before it can answer (usage, an app that cannot load): exit 2. */
export class CommandError extends Error {
  constructor (message: string, readonly exitCode = 2) {
    super(message)
    this.name = 'CommandError'
  }
}

/** What a command reads and writes; the real process in `main.ts`, captured strings in tests. */
export interface CommandIo {
  out: (line: string) => void
  err: (line: string) => void
  stdin: AsyncIterable<unknown>
  /** colours are for terminals only: never when the output is piped */
  colors: boolean
}

/** Colours on a terminal, unless NO_COLOR is set; FORCE_COLOR (not 0) asks for them anywhere. */
export function colorsWanted (env: NodeJS.ProcessEnv, isTTY: boolean): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '') return env.FORCE_COLOR !== '0'
  return isTTY
}

export function processIo (): CommandIo {
  const colors = colorsWanted(process.env, process.stdout.isTTY === true)
  // a reader that goes away (`| head -4`) is no failure: the rest of the output goes nowhere
  let readerGone = false
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
    readerGone = true
  })
  return {
    out: (line) => { if (!readerGone) process.stdout.write(printable(line, colors) + '\n') },
    err: (line) => { process.stderr.write(printable(line, colors) + '\n') },
    stdin: process.stdin,
    colors
  }
}

const STYLES = { bold: [1, 22], dim: [2, 22], red: [31, 39], green: [32, 39], yellow: [33, 39], cyan: [36, 39] } as const
export type Style = keyof typeof STYLES

/**
 * Characters a terminal acts on rather than shows: C0 controls but the line feed (ESC starts
 * sequences that move the cursor, clear the screen, retitle the window; BEL rings; CR
 * overwrites the line), DEL, C1 controls (U+009B is a CSI too), and Unicode's bidirectional
 * overrides and isolates, which reorder what is shown.
 */
const CONTROL = '[\\u0000-\\u0009\\u000b-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069]'
const CONTROLS = new RegExp(CONTROL, 'g')
/** With colours, paint()'s own sequences are kept: the only escapes the console means to write. */
const CONTROLS_BUT_STYLES = new RegExp(`\\u001b\\[(?:${[...new Set(Object.values(STYLES).flat())].join('|')})m|${CONTROL}`, 'g')

/**
 * A line as the console prints it: every control character in it written as its JSON escape
 * (`\u001b`, `\u0007`), whatever it came from (a path, `--host`, a route, an error), so that
 * no text can drive the terminal; `--json` output stays valid JSON. Line feeds are the
 * console's own line breaks. (With colours, text holding exactly one of paint()'s sequences
 * could change a colour, and nothing else.)
 */
export function printable (line: string, colors: boolean): string {
  return line.replace(colors ? CONTROLS_BUT_STYLES : CONTROLS, (match) => match.length > 1 ? match : `\\u${match.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** `text` in a terminal style when the output is a terminal; as it is otherwise. */
export function paint (io: Pick<CommandIo, 'colors'>, style: Style, text: string): string {
  if (!io.colors || text === '') return text
  const [open, close] = STYLES[style]
  return `\u001b[${open}m${text}\u001b[${close}m`
}

/**
 * Rows as aligned columns (two spaces apart, the last column unpadded); `style` paints cells
 * after the padding is measured, so colours never shift the columns. The header is bold.
 */
export function table (io: Pick<CommandIo, 'colors'>, header: string[], rows: string[][], style: (row: number, column: number) => Style | undefined = () => undefined): string[] {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)))
  const line = (cells: string[], cellStyle: (column: number) => Style | undefined): string => cells.map((cell, column) => {
    const padded = column === cells.length - 1 ? cell : cell.padEnd(widths[column])
    const chosen = cellStyle(column)
    return chosen === undefined ? padded : paint(io, chosen, padded)
  }).join('  ').trimEnd()
  return [line(header, () => 'bold'), ...rows.map((row, index) => line(row, (column) => style(index, column)))]
}
