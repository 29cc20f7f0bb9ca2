/**
 * Editors known by name, as Symfony's `framework.ide` knows them; any other value is a format
 * of its own with `%f` (the file) and `%l` (the line).
 */
export const EDITORS: Readonly<Record<string, string>> = {
  vscode: 'vscode://file/%f:%l',
  cursor: 'cursor://file/%f:%l',
  phpstorm: 'phpstorm://open?file=%f&line=%l',
  webstorm: 'webstorm://open?file=%f&line=%l',
  idea: 'idea://open?file=%f&line=%l',
  sublime: 'subl://open?url=file://%f&line=%l',
  textmate: 'txmt://open?url=file://%f&line=%l',
  macvim: 'mvim://open?url=file://%f&line=%l',
  emacs: 'emacs://open?url=file://%f&line=%l',
  atom: 'atom://core/open/file?filename=%f&line=%l'
}

export type FileLinker = (file: string, line: number) => string

/**
 * Turns a `fileLinkFormat` into a function giving the link of a file and line, as Symfony's
 * FileLinkFormatter does, path mappings included: after the format,
 * `&/path/in/container>/path/on/host` pairs rewrite the start of a path (the first that
 * matches), so that links from a container open the host's copy of the file.
 * `vscode://file/%f:%l&/app/>/home/me/project/`. Undefined or empty: no links.
 */
export function fileLinker (format: string | undefined): FileLinker | undefined {
  if (format === undefined || format.trim() === '') return undefined
  const given = resolveEditor(format.trim())
  // the mappings start at the first "&" after the last placeholder (formats have "&" of their own)
  const end = Math.max(given.lastIndexOf('%f'), given.lastIndexOf('%l'))
  const split = given.indexOf('&', Math.max(0, end))
  const template = split === -1 ? given : given.slice(0, split)
  const mappings: Array<[string, string]> = []
  if (split !== -1) {
    for (const pair of given.slice(split + 1).split('&')) {
      const arrow = pair.indexOf('>')
      if (arrow > 0) mappings.push([pair.slice(0, arrow), pair.slice(arrow + 1)])
    }
  }
  return (file, line) => {
    let path = file
    for (const [from, to] of mappings) {
      if (path.startsWith(from)) { path = to + path.slice(from.length); break }
    }
    return template.replaceAll('%f', path).replaceAll('%l', String(line))
  }
}

/** An editor's name (its mappings kept: `vscode&/app>/home/me`) as its format; a format as it is. */
function resolveEditor (format: string): string {
  const amp = format.indexOf('&')
  const head = amp === -1 ? format : format.slice(0, amp)
  return Object.hasOwn(EDITORS, head) ? EDITORS[head] + (amp === -1 ? '' : format.slice(amp)) : format
}

/**
 * Why a `fileLinkFormat` cannot make links, or undefined when it can: neither an editor's name
 * nor a format with `%f` (`notepad` would make every link `href="notepad"`).
 */
export function fileLinkFormatProblem (format: string): string | undefined {
  if (format.trim() === '' || resolveEditor(format.trim()).includes('%f')) return undefined
  return `option "fileLinkFormat" must be an editor's name (${Object.keys(EDITORS).join(', ')}) or a format with %f and %l, not "${format}"`
}
