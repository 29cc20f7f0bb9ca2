/**
 * The commands the docs show, and how their output is compared.
 *
 * A command is a `$ ` line of a ```console block; the lines after it, up to the next `$ ` line,
 * are what it prints (stdout and stderr, as a terminal shows them). A line ending in ` \` goes
 * on on the next. Any other shell block (```sh) may hold only the commands of NOT_RUN_HERE,
 * each checked in its own way; a code block without a language, or a `$ ` line outside a
 * console block, is refused, so that no command can be shown unchecked.
 */
import type { CodeBlock } from './markdown.js'

export const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell', 'zsh', 'console', 'shell-session'])

export interface Example {
  file: string
  /** line of its `$ ` in the file */
  line: number
  /** the command as bash gets it (continuations joined) */
  command: string
  /** its lines as written (with their continuations) */
  written: string[]
  expected: string
}

/** The examples of a console block, or the reason it cannot be read. */
export function examplesOf (block: CodeBlock): Example[] | string {
  const lines = block.text.split('\n')
  const examples: Example[] = []
  let current: Example | undefined
  let output: string[] = []
  const finish = (): void => {
    if (current !== undefined) examples.push({ ...current, expected: output.join('\n') })
  }
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith('$ ')) {
      if (current === undefined && lines[i].trim() !== '') return `output before any "$ " command line: ${lines[i]}`
      output.push(lines[i])
      continue
    }
    finish()
    const written = [lines[i]]
    while (written.at(-1)!.endsWith(' \\') && i + 1 < lines.length) written.push(lines[++i])
    const command = written.map((line) => line.replace(/ \\$/, '')).join(' ').slice(2).trim()
    current = { file: block.file, line: block.line + 1 + i - (written.length - 1), command, written, expected: '' }
    output = []
  }
  finish()
  return examples.length > 0 ? examples : 'a console block without a "$ " command line'
}

/** The command lines of a non-console shell block, comments and blank lines left out. */
export function shellLines (block: CodeBlock): string[] {
  return block.text.split('\n').map((line) => line.replace(/(^|\s)#.*$/, '').trim()).filter((line) => line !== '')
}

/** The docs say 8000, the port of `npm start`; the tests' service listens on a free port. */
export const DOCS_PORT = 8000
export const SERVICE_URL = /\b(127\.0\.0\.1|localhost):8000\b/

/**
 * An output as the docs show it: LF line ends (HTTP headers come with CRLF), no trailing spaces
 * nor blank lines at the end, the service's port as the docs say it, and without npm's own
 * warnings (they depend on the user's npm configuration).
 */
export function asShown (text: string, port = DOCS_PORT): string {
  return text
    .replace(/\r\n/g, '\n')
    .split('\n')
    .filter((line) => !/^npm (warn|notice) /.test(line))
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(new RegExp(`\\b(127\\.0\\.0\\.1|localhost)(:|%3A)${port}\\b`, 'g'), `$1$2${DOCS_PORT}`)
    .replace(/\n+$/, '')
}

/**
 * What varies from run to run, made the same on both sides of a comparison so that the docs
 * show real values: HTTP dates, profiler tokens, session cookies, the salt and hash of a scrypt
 * password hash.
 */
export function normalise (shown: string): string {
  return asShown(shown)
    .replace(/^(date: ).+$/gim, '$1<date>')
    .replace(/^(x-debug-token: )[0-9a-f]{6}$/gim, '$1<token>')
    .replace(/(\/_(?:profiler|wdt)\/)[0-9a-f]{6}\b/g, '$1<token>')
    .replace(/\b(sessionId=)[^;\s]+/g, '$1<session id>')
    .replace(/(\$scrypt\$ln=\d+,r=\d+,p=\d+\$)[A-Za-z0-9+/=_-]+\$[A-Za-z0-9+/=_-]+/g, (_match, params: string) => `${params}<salt>$<hash>`)
}

/** An example written back with the output a run gave (`UPDATE_DOCS=1`). */
export function rewritten (example: Example, shown: string): string[] {
  const separated = /\n\s*$/.test(example.expected)
  return [...example.written, ...(shown === '' ? [] : shown.split('\n')), ...(separated ? [''] : [])]
}
