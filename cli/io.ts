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
  // a reader that goes away (`| head -4`) is no failure: the rest of the output goes nowhere
  let readerGone = false
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
    readerGone = true
  })
  return {
    out: (line) => { if (!readerGone) process.stdout.write(line + '\n') },
    err: (line) => { process.stderr.write(line + '\n') },
    stdin: process.stdin,
    colors: colorsWanted(process.env, process.stdout.isTTY === true)
  }
}

const STYLES = { bold: [1, 22], dim: [2, 22], red: [31, 39], green: [32, 39], yellow: [33, 39], cyan: [36, 39] } as const
export type Style = keyof typeof STYLES

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
