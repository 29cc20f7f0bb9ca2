import { isAbsolute, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { SourceExcerpts } from '../../../errors/source-excerpt.js'
import { isKernelFile, isVendorFile } from '../../../errors/source-excerpt.js'
import type { CpuCallFrame } from './cpu-profile.js'

/** Whose code a frame runs: the app's, the kernel's, a dependency's, Node's, or V8's own (native, GC, idle). */
export type FrameKind = 'app' | 'kernel' | 'dependency' | 'node' | 'vm'

export const FRAME_KINDS: ReadonlyArray<{ kind: FrameKind, label: string }> = [
  { kind: 'app', label: 'application' },
  { kind: 'kernel', label: 'fastify-kernel' },
  { kind: 'dependency', label: 'node_modules' },
  { kind: 'node', label: 'Node.js' },
  { kind: 'vm', label: 'V8, native, GC' }
]

/** The flame graph's colours: a hue range per kind, the hue picked by the name (as flamegraph.pl). */
const PALETTE: Record<FrameKind, { hue: number, spread: number, saturation: number, lightness: number }> = {
  app: { hue: 8, spread: 28, saturation: 78, lightness: 62 },
  kernel: { hue: 262, spread: 24, saturation: 42, lightness: 72 },
  dependency: { hue: 44, spread: 18, saturation: 80, lightness: 58 },
  node: { hue: 196, spread: 22, saturation: 48, lightness: 68 },
  vm: { hue: 220, spread: 0, saturation: 8, lightness: 76 }
}

function hash (text: string): number {
  let h = 2166136261
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619)
  return (h >>> 0) / 4294967295
}

/** A frame's colour: its kind's hue range, the hue picked by its name, so a function keeps its colour. */
export function fillOf (kind: FrameKind, name: string): string {
  const { hue, spread, saturation, lightness } = PALETTE[kind]
  return `hsl(${Math.round(hue + spread * hash(name))},${saturation}%,${lightness}%)`
}

/** A kind's colour, for the legend. */
export function kindFill (kind: FrameKind): string {
  const { hue, spread, saturation, lightness } = PALETTE[kind]
  return `hsl(${Math.round(hue + spread / 2)},${saturation}%,${lightness}%)`
}

export function nameOf (frame: CpuCallFrame): string {
  return frame.functionName === '' ? '(anonymous)' : frame.functionName
}

function fileOf (url: string): string {
  if (!url.startsWith('file://')) return url
  try {
    return fileURLToPath(url)
  } catch {
    return url
  }
}

function kindOf (frame: CpuCallFrame, file: string): FrameKind {
  if (frame.url === '') return 'vm'
  if (file.startsWith('node:')) return 'node'
  if (!isAbsolute(file)) return 'vm'
  // the kernel's own frames, installed in the app's node_modules too
  if (isKernelFile(file)) return 'kernel'
  if (file.includes(`${sep}node_modules${sep}`)) return 'dependency'
  return isVendorFile(file) ? 'kernel' : 'app'
}

/** Where a function is, as the panel shows it. */
export interface Located {
  /** its file (the TypeScript source where a source map says) and line; the URL as V8 gave it otherwise; empty for native code */
  where: string
  /** the editor link, with `fileLinkFormat` */
  link?: string
  kind: FrameKind
}

/** Where each call frame's function is, mapped through source maps once per position. */
export class Locations {
  private readonly known = new Map<string, Located>()

  constructor (private readonly sources: SourceExcerpts | undefined) {}

  of (frame: CpuCallFrame): Located {
    const key = `${frame.url}:${frame.lineNumber}:${frame.columnNumber}`
    let located = this.known.get(key)
    if (located === undefined) {
      located = this.locate(frame)
      this.known.set(key, located)
    }
    return located
  }

  private locate (frame: CpuCallFrame): Located {
    const file = fileOf(frame.url)
    if (frame.url === '' || frame.lineNumber < 0) return { where: file, kind: kindOf(frame, file) }
    // V8 counts lines and columns from 0, stack frames (what the source maps are read with) from 1
    const line = frame.lineNumber + 1
    const mapped = this.sources?.locate({ function: frame.functionName, file, line, column: frame.columnNumber + 1, vendor: false })
    const shown = mapped ?? { file, display: file, line, link: undefined }
    const located: Located = { where: `${shown.display ?? shown.file}:${shown.line}`, kind: kindOf(frame, shown.file) }
    if (shown.link !== undefined) located.link = shown.link
    return located
  }
}
