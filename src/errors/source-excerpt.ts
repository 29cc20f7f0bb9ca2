import { readFileSync } from 'node:fs'
import { isAbsolute, join, relative, sep } from 'node:path'
import { LRUCache } from 'lru-cache'
import { packageRoot } from './kernel-files.js'
import type { FlatException, SourceLine, StackFrame } from './flatten.js'
import { flattenChain, parseStack } from './flatten.js'
import { originalPosition } from './source-map.js'
import { fileLinker } from './file-link.js'
import type { FileLinker } from './file-link.js'

/** Lines shown before and after the line a frame points at. */
export const EXCERPT_CONTEXT = 5
/** Application frames of one exception that get an excerpt; the rest show file and line only. */
const MAX_EXCERPTS = 20
/** A source line longer than this is cut: a minified file says nothing readable anyway. */
const MAX_LINE = 400
const MAX_SOURCE_BYTES = 4 * 1024 * 1024
const MAX_POSITIONS = 4096
/** Described traces kept, and the longest frames text kept as a key (a whole deep stack is a few KB). */
const MAX_TRACES = 256
const MAX_TRACE_KEY = 64 * 1024

/**
 * The kernel's own code, shown folded like a dependency's (as Symfony's frames are under
 * `vendor/`): installed, it is in node_modules anyway. Its example service is an application.
 */
// the example service (service/) sits beside the plugin: its frames are application code
const KERNEL_DIRS = ['src', 'plugins', 'cli', 'dist/src', 'dist/plugins', 'dist/cli'].map((dir) => join(packageRoot, dir) + sep)
const KERNEL_FILES = new Set(['index.ts', 'dist/index.js'].map((file) => join(packageRoot, file)))

export function isVendorFile (file: string): boolean {
  if (!isAbsolute(file)) return true // node:internal, <anonymous>, native
  if (file.includes(`${sep}node_modules${sep}`)) return true
  return isKernelFile(file)
}

/** The kernel's own code, wherever it is installed (an app's node_modules included). */
export function isKernelFile (file: string): boolean {
  return KERNEL_FILES.has(file) || KERNEL_DIRS.some((dir) => file.startsWith(dir))
}

const NODE_MODULES = `${sep}node_modules${sep}`

/** The folder of the installed package a file belongs to (`…/node_modules/@scope/name/`), if it is in one. */
export function packageFolderOf (file: string): string | undefined {
  const at = file.lastIndexOf(NODE_MODULES)
  if (at === -1) return undefined
  const parts = file.slice(at + NODE_MODULES.length).split(sep)
  const depth = parts[0]?.startsWith('@') === true ? 2 : 1
  if (parts.length <= depth) return undefined
  return file.slice(0, at + NODE_MODULES.length) + parts.slice(0, depth).join(sep) + sep
}

/**
 * Source files by path, split in lines, kept for the process (bounded): the code that runs is
 * the code loaded at start, so re-reading a file on every error page would buy nothing.
 */
const sources = new LRUCache<string, { lines: string[] | null }>({ max: 256 })

function linesOf (file: string, content: string | null): string[] | null {
  let entry = sources.get(file)
  if (entry === undefined) {
    let text: string | null = null
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      text = content // a map's sourcesContent, when the original is not on disk
    }
    entry = { lines: text === null || text.length > MAX_SOURCE_BYTES ? null : text.split(/\r\n|\r|\n/) }
    sources.set(file, entry)
  }
  return entry.lines
}

/** The lines around `line` (1-based), the line itself marked. */
export function excerptOf (lines: readonly string[], line: number, context = EXCERPT_CONTEXT): SourceLine[] | undefined {
  if (line < 1 || line > lines.length) return undefined
  const out: SourceLine[] = []
  for (let n = Math.max(1, line - context); n <= Math.min(lines.length, line + context); n++) {
    const text = lines[n - 1]
    out.push({ number: n, text: text.length > MAX_LINE ? `${text.slice(0, MAX_LINE)}…` : text, current: n === line })
  }
  return out
}

export interface SourceExcerptOptions {
  /** paths are shown relative to this folder (the project root) */
  root: string
  /** `vscode://file/%f:%l`, an editor's name, or undefined for no links */
  fileLinkFormat?: string
}

/**
 * What debug pages add to a stack trace: each frame mapped to its original source through the
 * compiled file's source map, the path shown relative to the project root, an "open in editor"
 * link, and for frames of application code the lines around the one that threw.
 */
export class SourceExcerpts {
  private readonly link: FileLinker | undefined
  private readonly root: string
  private readonly displayPaths = new LRUCache<string, string>({ max: 1024 })
  /**
   * Described positions (`file:line:column`): the same few frames recur in every error of an
   * app (its routing errors, its middleware), and describing one costs a map lookup, path work
   * and an excerpt; reused, a whole stack costs a few map reads.
   */
  private readonly positions = new Map<string, Omit<StackFrame, 'function'>>()
  private readonly chains = new WeakMap<object, FlatException[]>()
  /**
   * Described traces by their frames text (a stack without its message line): errors raised at
   * the same place (every routing miss, an app's recurring failure) share it, and are parsed
   * and described once. The frames come from the code, not from requests; the map is bounded.
   */
  private readonly traces = new Map<string, StackFrame[]>()

  constructor (options: SourceExcerptOptions) {
    this.root = options.root
    this.link = fileLinker(options.fileLinkFormat)
  }

  /**
   * The chain of an exception with its frames described, made once per error: the debug page
   * and the profiler's exception panel show the same. (Held weakly: it goes with its error.)
   */
  chain (error: unknown): FlatException[] {
    const made = typeof error === 'object' && error !== null ? this.chains.get(error) : undefined
    if (made !== undefined) return made
    // each exception's `file:line` follow its first frame, described
    const chain = flattenChain(error, true, this.describedTrace)
    if (typeof error === 'object' && error !== null) this.chains.set(error, chain)
    return chain
  }

  /** A stack's frames, each mapped and described: shared by the stacks with the same frames, as copies. */
  private readonly describedTrace = (stack: string | undefined): StackFrame[] => {
    if (stack === undefined) return []
    const at = stack.indexOf('\n    at ')
    // a message whose own lines read as frames (rare) is described whole, uncached
    if (at === -1 || stack.length - at > MAX_TRACE_KEY || parseStack(stack.slice(0, at)).length > 0) return this.describeAll(parseStack(stack))
    const key = stack.slice(at + 1)
    let trace = this.traces.get(key)
    if (trace === undefined) {
      trace = this.describeAll(parseStack(key))
      if (this.traces.size >= MAX_TRACES) this.traces.clear()
      this.traces.set(key, trace)
    }
    return trace.map((frame) => ({ ...frame }))
  }

  /** Every frame mapped and described, the first application frames with their excerpts. */
  private describeAll (frames: StackFrame[]): StackFrame[] {
    let excerpts = 0
    return frames.map((frame) => {
      const described = this.describe(frame, excerpts < MAX_EXCERPTS)
      if (described.excerpt !== undefined) excerpts++
      return described
    })
  }

  /** One frame mapped to its source, its path shown relative to the root, with its editor link; no excerpt. */
  locate (frame: StackFrame): StackFrame {
    return this.describe(frame, false)
  }

  private describe (frame: StackFrame, withExcerpt: boolean): StackFrame {
    const key = `${withExcerpt ? '+' : '-'}${frame.file}:${frame.line}:${frame.column}`
    let position = this.positions.get(key)
    if (position === undefined) {
      const { function: _name, ...described } = this.describePosition(frame, withExcerpt)
      position = described
      if (this.positions.size >= MAX_POSITIONS) this.positions.clear()
      this.positions.set(key, position)
    }
    return { function: frame.function, ...position }
  }

  private describePosition (frame: StackFrame, withExcerpt: boolean): StackFrame {
    const mapped = originalPosition(frame.file, frame.line, frame.column)
    // a package's source map naming sources outside the package was made for another layout
    // (drizzle-orm's `../../src/…`, from a dist/ folder it does not ship): its compiled file is shown
    const folder = mapped === null ? undefined : packageFolderOf(frame.file)
    const original = folder !== undefined && !mapped!.file.startsWith(folder) ? null : mapped
    const file = original?.file ?? frame.file
    const line = original?.line ?? frame.line
    const vendor = isVendorFile(file)
    const described: StackFrame = {
      ...frame,
      file,
      line,
      column: original?.column ?? frame.column,
      vendor,
      display: this.display(file)
    }
    if (this.link !== undefined && isAbsolute(file)) described.link = this.link(file, line)
    if (!vendor && withExcerpt) {
      const lines = linesOf(file, original?.content ?? null)
      const excerpt = lines === null ? undefined : excerptOf(lines, line)
      if (excerpt !== undefined) described.excerpt = excerpt
    }
    return described
  }

  private display (file: string): string {
    let shown = this.displayPaths.get(file)
    if (shown === undefined) {
      const inside = isAbsolute(file) ? relative(this.root, file) : ''
      shown = inside !== '' && !inside.startsWith('..') && !isAbsolute(inside) ? inside : file
      this.displayPaths.set(file, shown)
    }
    return shown
  }
}
