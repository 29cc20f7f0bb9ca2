import { isAbsolute } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { SourceExcerpts } from '../errors/source-excerpt.js'
import { isVendorFile } from '../errors/source-excerpt.js'
import { parseStack } from '../errors/flatten.js'
import type { StackFrame } from '../errors/flatten.js'

/**
 * Where in the app's code a call was made (a SQL statement, a Redis command, an HTTP call, a
 * render, a dump): the first frame of its stack that is the app's (not Node's, not a
 * dependency's, not the kernel's), mapped to its source, as Telescope's `ignore_packages` does.
 */
export interface SpanOrigin {
  /** the source file, relative to the project root (`routes/books.ts`) */
  file: string
  line: number
  /** the function, when it has a name */
  function?: string
  /** the "open in editor" link, when the kernel's `fileLinkFormat` is set */
  link?: string
}

/** Frames a capture site starts with, before it has seen where the app's frame lies. */
const FIRST_FRAMES = 24
/** Most frames a capture site keeps. */
const MAX_FRAMES = 64
/** Frames kept beyond the deepest app frame seen: a call path slightly deeper than those seen still has its origin. */
const MARGIN = 3
/** Frames a learning site keeps at least: a library's call paths differ by a few frames (a pipeline, a traced or a hand-published call). */
const MIN_FRAMES = 8

/**
 * Where a kind of call captures its stack (a channel handler, `SpanList.start`, a render): which
 * frames to leave out, and how many to keep. Each frame kept costs the capture about 0.4 µs,
 * and the app's frame lies at about the same depth below a given library's call (3 frames for
 * ioredis, 5 for node-redis, 7 for a mysql2 pool, more under an ORM): a site learns that depth
 * from the stacks resolved so far and keeps only as many frames, plus a margin (8 at least). A stack that was
 * cut before reaching an app frame (a deeper call path) doubles the site's count for the next
 * calls: that call shows no origin, never a wrong one.
 */
export class OriginCapture {
  frames: number
  /** the deepest app frame seen, counted from the first frame kept (1 = the first) */
  private deepest = 0

  /**
   * @param skip frames above this function's call (and the call itself) are left out, at no cost
   * @param fixed a fixed count (a render, a dump: the caller is the app); undefined to learn it
   * @param otherwise the function to skip to instead, from the first stack on which `skip` was
   *   not found (such a stack is empty: V8 keeps nothing when it does not meet the function)
   * @param minimum frames kept at least, once learning (below `fetch()`, the caller is right there: fewer)
   */
  constructor (public skip: Function, private readonly fixed?: number, private otherwise?: Function, private readonly minimum = MIN_FRAMES) {
    this.frames = fixed ?? FIRST_FRAMES
  }

  /** A stack of this site was resolved: its app frame was the `found`th (undefined: none), of `kept` frames captured with `limit`. */
  learn (found: number | undefined, kept: number, limit: number): void {
    if (kept === 0 && this.otherwise !== undefined) {
      this.skip = this.otherwise
      this.otherwise = undefined
      this.deepest = 0
      this.frames = this.fixed ?? FIRST_FRAMES
      return
    }
    if (this.fixed !== undefined) return
    if (found !== undefined) {
      if (found > this.deepest) this.deepest = found
      // back to what the paths seen need, after a stack with no app frame at all made it grow
      this.frames = Math.min(MAX_FRAMES, Math.max(this.minimum, this.deepest + MARGIN))
    } else if (kept >= limit && limit >= this.frames) {
      // cut short: the app's frame may lie deeper
      this.frames = Math.min(MAX_FRAMES, Math.max(this.frames * 2, this.deepest + MARGIN))
    }
  }
}

/**
 * A stack captured where a call started. V8 records the frames (positions, cheap) and formats
 * them only when `stack` is read: here, when the profile is built, after the response. The
 * process-wide `Error.stackTraceLimit` (raised to Infinity in debug) is lowered for the capture:
 * a request's stack runs deep into Fastify, and only the frames down to the app's are needed.
 */
export class CapturedStack {
  declare readonly stack: unknown
  /** a stack captured earlier for the same call (the caller of a pool, when the call starts on a later tick), used when this one has no frame of the app's */
  fallback: CapturedStack | undefined
  /** frames asked for */
  readonly limit: number

  constructor (skip: Function, frames: number, readonly site?: OriginCapture) {
    const limit = Error.stackTraceLimit
    Error.stackTraceLimit = frames
    Error.captureStackTrace(this, skip)
    Error.stackTraceLimit = limit
    this.limit = frames
  }

  /** A stack taken where `site` says. */
  static at (site: OriginCapture): CapturedStack {
    return new CapturedStack(site.skip, site.frames, site)
  }

  /** The frames, as V8's call sites (or, when something read `stack` before, as parsed text). */
  frames (): ReadonlyArray<NodeJS.CallSite | StackFrame> {
    const previous = Error.prepareStackTrace
    let value: unknown
    try {
      Error.prepareStackTrace = callSitesOf
      value = this.stack
    } catch {
      // a frozen Error, a throwing getter: no frames
      value = undefined
    } finally {
      Error.prepareStackTrace = previous
    }
    if (Array.isArray(value)) return value as NodeJS.CallSite[]
    return typeof value === 'string' ? parseStack(value) : []
  }
}

function callSitesOf (_error: Error, sites: NodeJS.CallSite[]): NodeJS.CallSite[] {
  return sites
}

const isCallSite = (frame: NodeJS.CallSite | StackFrame): frame is NodeJS.CallSite => typeof (frame as NodeJS.CallSite).getFileName === 'function'

/** The script's path (ESM frames name a `file://` URL), or undefined for Node's own and native code. */
function pathOf (name: string | null | undefined): string | undefined {
  if (typeof name !== 'string' || name === '') return undefined
  if (name.startsWith('file://')) {
    try {
      return fileURLToPath(name)
    } catch {
      return undefined
    }
  }
  return isAbsolute(name) ? name : undefined
}

/** Resolved positions kept, by the compiled position they came from (the same few recur: a loop's query). */
const MAX_POSITIONS = 4096
const HEADER = Object.freeze({ name: 'Error', message: '' })

/**
 * Turns captured stacks into origins when the profile is built. Each candidate frame is mapped
 * to its source the way the process maps its stack traces (`--enable-source-maps`, tsx,
 * ts-node: the installed `Error.prepareStackTrace`, asked for that one frame), then through the
 * compiled file's source map on disk (`tsc` output run without the flag), and shown relative to
 * the project root with its editor link, as the debug error page shows frames. Positions are
 * resolved once: a query made in a loop costs one lookup per span after the first.
 */
export class OriginResolver {
  private readonly positions = new Map<string, SpanOrigin | null>()
  /** each script name a stack names, as a path; null for Node's, the dependencies' and the kernel's */
  private readonly scripts = new Map<string, string | null>()

  constructor (private readonly sources: SourceExcerpts | undefined) {}

  /** The app's frame of a captured stack (or of its fallback); undefined when it has none. */
  resolve (stack: CapturedStack | undefined): SpanOrigin | undefined {
    for (let captured = stack; captured !== undefined; captured = captured.fallback) {
      const frames = captured.frames()
      const found = this.first(frames)
      // a stack that has a fallback started on a later tick: its miss says nothing of its site's depth
      if (found !== undefined || captured.fallback === undefined) captured.site?.learn(found === undefined ? undefined : found.index + 1, frames.length, captured.limit)
      if (found !== undefined) return found.origin
    }
    return undefined
  }

  private first (frames: ReadonlyArray<NodeJS.CallSite | StackFrame>): { origin: SpanOrigin, index: number } | undefined {
    for (let index = 0; index < frames.length; index++) {
      const frame = frames[index]!
      const file = this.script(isCallSite(frame) ? frame.getFileName() : frame.file)
      // Node's own code, a dependency's, the kernel's: not where the app made the call
      if (file === null) continue
      const line = (isCallSite(frame) ? frame.getLineNumber() : frame.line) ?? 0
      const column = (isCallSite(frame) ? frame.getColumnNumber() : frame.column) ?? 0
      const key = `${file}:${line}:${column}`
      let origin = this.positions.get(key)
      if (origin === undefined) {
        origin = this.describe(isCallSite(frame) ? this.mapped(frame, file) : { ...frame, file })
        if (this.positions.size >= MAX_POSITIONS) this.positions.clear()
        this.positions.set(key, origin)
      }
      if (origin !== null) return { origin, index }
    }
    return undefined
  }

  /** A script's path when it may be the app's (not Node's, a dependency's or the kernel's), else null. */
  private script (name: string | null | undefined): string | null {
    if (typeof name !== 'string') return null
    let path = this.scripts.get(name)
    if (path === undefined) {
      const file = pathOf(name)
      path = file === undefined || isVendorFile(file) ? null : file
      if (this.scripts.size >= MAX_POSITIONS) this.scripts.clear()
      this.scripts.set(name, path)
    }
    return path
  }

  /** One call site as the process formats it (source maps applied), read back as a frame. */
  private mapped (site: NodeJS.CallSite, file: string): StackFrame {
    const raw: StackFrame = { function: site.getFunctionName() ?? site.getMethodName() ?? '(anonymous)', file, line: site.getLineNumber() ?? 0, column: site.getColumnNumber() ?? 0, vendor: false }
    const format = Error.prepareStackTrace
    if (typeof format !== 'function') return raw
    try {
      const text: unknown = format(HEADER as Error, [site])
      const frame = typeof text === 'string' ? parseStack(text)[0] : undefined
      return frame === undefined ? raw : { ...frame, function: raw.function }
    } catch {
      return raw
    }
  }

  /** The frame shown: mapped through a source map on disk, relative to the root, with its link; null when it is not the app's after all. */
  private describe (frame: StackFrame): SpanOrigin | null {
    const located = this.sources?.locate(frame) ?? frame
    if (isVendorFile(located.file)) return null
    const origin: SpanOrigin = { file: (located.display ?? located.file).split('\\').join('/'), line: located.line }
    if (frame.function !== '(anonymous)' && frame.function !== '') origin.function = frame.function
    if (located.link !== undefined) origin.link = located.link
    return origin
  }
}
