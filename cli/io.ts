/** What a command reads and writes; the real process in `main.ts`, captured strings in tests. */
export interface CommandIo {
  out: (line: string) => void
  err: (line: string) => void
  stdin: AsyncIterable<unknown>
  /** colours are for terminals only: never when the output is piped */
  colors: boolean
}

export function processIo (): CommandIo {
  return {
    out: (line) => { process.stdout.write(line + '\n') },
    err: (line) => { process.stderr.write(line + '\n') },
    stdin: process.stdin,
    colors: process.stdout.isTTY === true && process.env.NO_COLOR === undefined
  }
}
