import { isAbsolute, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { SourceExcerpts } from '../../errors/source-excerpt.js'
import { isVendorFile } from '../../errors/source-excerpt.js'
import type { CpuCallFrame, CpuProfile, CpuProfileNode } from './cpu-profile.js'

/** Whose code a frame runs: the app's, the kernel's, a dependency's, Node's, or V8's own (native, GC, idle). */
export type FrameKind = 'app' | 'kernel' | 'dependency' | 'node' | 'vm'

export const FRAME_KINDS: ReadonlyArray<{ kind: FrameKind, label: string }> = [
  { kind: 'app', label: 'application' },
  { kind: 'kernel', label: 'fastify-kernel' },
  { kind: 'dependency', label: 'node_modules' },
  { kind: 'node', label: 'Node.js' },
  { kind: 'vm', label: 'V8, native, GC' }
]

/** One frame of the flame graph, placed (SVG user units). */
export interface FlameRect {
  x: number
  y: number
  width: number
  kind: FrameKind
  fill: string
  /** the name cut to the frame's width (empty when too narrow) */
  label: string
  /** the tooltip: function, where, self and total time */
  title: string
  /** where the label starts */
  textX: number
  textY: number
}

/** One function of the profile, all its call sites together. */
export interface CpuFunction {
  name: string
  /** source file (mapped to the TypeScript source where a source map says) and line; empty for native code */
  where: string
  link?: string
  kind: FrameKind
  selfMs: number
  selfShare: number
  totalMs: number
  totalShare: number
}

export interface FlameGraph {
  width: number
  height: number
  rowHeight: number
  rects: FlameRect[]
  /** frames narrower than a pixel, or past the depth or count bound: not drawn (their time is in their parents') */
  hidden: number
  /** the functions with the most self time */
  functions: CpuFunction[]
  /** from the first sample to the end, ms */
  sampledMs: number
  /** samples outside `(idle)`, ms */
  busyMs: number
  idleMs: number
  samples: number
  /** the mean time between samples, µs (V8 samples no faster than asked, and later under load) */
  meanIntervalUs: number
}

/** about the width of a panel at 1280 pixels: labels close to their font size */
const WIDTH = 1000
const ROW = 17
/** below this width (SVG units) a frame is not drawn */
const MIN_WIDTH = 0.6
const MAX_DEPTH = 160
const MAX_RECTS = 6000
const TOP_FUNCTIONS = 40
/** the width of one character of the labels (11px monospace) */
const CHAR_WIDTH = 6.7

const IDLE = '(idle)'

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

function fillOf (kind: FrameKind, name: string): string {
  const { hue, spread, saturation, lightness } = PALETTE[kind]
  return `hsl(${Math.round(hue + spread * hash(name))},${saturation}%,${lightness}%)`
}

/** A kind's colour, for the legend. */
export function kindFill (kind: FrameKind): string {
  const { hue, spread, saturation, lightness } = PALETTE[kind]
  return `hsl(${Math.round(hue + spread / 2)},${saturation}%,${lightness}%)`
}

function ms (us: number): number {
  return Math.round(us) / 1000
}

function share (part: number, whole: number): number {
  return whole <= 0 ? 0 : Math.round((part / whole) * 1000) / 10
}

function nameOf (frame: CpuCallFrame): string {
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
  if (file.includes(`${sep}node_modules${sep}`)) return 'dependency'
  return isVendorFile(file) ? 'kernel' : 'app'
}

interface Located {
  where: string
  link?: string
  kind: FrameKind
}

/** Where each call frame's function is, mapped through source maps once per position. */
class Locations {
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
    const line = frame.lineNumber + 1
    const mapped = this.sources?.locate({ function: frame.functionName, file, line, column: frame.columnNumber + 1, vendor: false })
    const shown = mapped === undefined ? { file, display: file, line, link: undefined } : mapped
    const located: Located = { where: `${shown.display ?? shown.file}:${shown.line}`, kind: kindOf(frame, shown.file) }
    if (shown.link !== undefined) located.link = shown.link
    return located
  }
}

/** Microseconds of samples that hit each node (its self time), from the samples and the time between them. */
function selfTimes (profile: CpuProfile): { self: Map<number, number>, samples: number, sampledUs: number } {
  const samples = profile.samples ?? []
  const deltas = profile.timeDeltas ?? []
  const count = Math.min(samples.length, deltas.length)
  const self = new Map<number, number>()
  if (count === 0) return { self, samples: 0, sampledUs: 0 }
  // a sample lasts until the next one (the last one until the profile's end), as DevTools counts
  const times = new Float64Array(count)
  let time = profile.startTime
  for (let i = 0; i < count; i++) {
    time += Number(deltas[i]) || 0
    times[i] = time
  }
  for (let i = 0; i < count; i++) {
    const duration = Math.max(0, (i + 1 < count ? times[i + 1] : profile.endTime) - times[i])
    self.set(samples[i], (self.get(samples[i]) ?? 0) + duration)
  }
  return { self, samples: count, sampledUs: Math.max(0, profile.endTime - times[0]) }
}

/**
 * The flame graph of a V8 CPU profile, made when its panel is shown: the call tree with each
 * node as wide as its time (root on top, the heaviest child first, frames narrower than a
 * pixel left out), each frame coloured by whose code it is and labelled, its tooltip giving
 * where the function is (mapped to its TypeScript source where the source maps say) with its
 * self and total time; and the functions with the most self time. `(idle)` (the thread waiting
 * for I/O) is left out of the graph and counted apart.
 */
export function flameGraph (profile: CpuProfile, sources: SourceExcerpts | undefined): FlameGraph {
  const byId = new Map<number, CpuProfileNode>()
  const children = new Set<number>()
  for (const node of profile.nodes) {
    byId.set(node.id, node)
    for (const child of node.children ?? []) children.add(child)
  }
  const root = profile.nodes.find((node) => !children.has(node.id))
  const { self, samples, sampledUs } = selfTimes(profile)
  const isIdle = (node: CpuProfileNode): boolean => node.callFrame.url === '' && node.callFrame.functionName === IDLE
  const kids = (node: CpuProfileNode): CpuProfileNode[] => (node.children ?? []).map((id) => byId.get(id)).filter((child): child is CpuProfileNode => child !== undefined && !isIdle(child))

  // total time of each node (itself and below), post-order without recursion
  const total = new Map<number, number>()
  const order: CpuProfileNode[] = []
  const visited = new Set<number>()
  for (const pending = root === undefined ? [] : [root]; pending.length > 0;) {
    const node = pending.pop()!
    if (visited.has(node.id)) continue // a damaged profile's cycle
    visited.add(node.id)
    order.push(node)
    for (const child of kids(node)) pending.push(child)
  }
  for (let i = order.length - 1; i >= 0; i--) {
    const node = order[i]
    let sum = self.get(node.id) ?? 0
    for (const child of kids(node)) sum += total.get(child.id) ?? 0
    total.set(node.id, sum)
  }
  let idleUs = 0
  for (const node of profile.nodes) if (isIdle(node)) idleUs += self.get(node.id) ?? 0
  const busyUs = root === undefined ? 0 : total.get(root.id) ?? 0

  const locations = new Locations(sources)
  const rects: FlameRect[] = []
  let hidden = 0
  let depth = 0
  if (root !== undefined && busyUs > 0) {
    const scale = WIDTH / busyUs
    const pending: Array<{ node: CpuProfileNode, x: number, depth: number }> = [{ node: root, x: 0, depth: 0 }]
    while (pending.length > 0) {
      const { node, x, depth: level } = pending.pop()!
      const width = (total.get(node.id) ?? 0) * scale
      if (width < MIN_WIDTH || level >= MAX_DEPTH || rects.length >= MAX_RECTS) {
        hidden++
        continue
      }
      depth = Math.max(depth, level + 1)
      const isRoot = node === root
      const name = isRoot ? 'all' : nameOf(node.callFrame)
      const located: Located = isRoot ? { where: '', kind: 'vm' } : locations.of(node.callFrame)
      const selfUs = self.get(node.id) ?? 0
      const totalUs = total.get(node.id) ?? 0
      const chars = Math.floor((width - 6) / CHAR_WIDTH)
      rects.push({
        x: Math.round(x * 100) / 100,
        y: level * ROW,
        textX: Math.round((x + 3) * 100) / 100,
        textY: level * ROW + 12,
        width: Math.round(width * 100) / 100,
        kind: located.kind,
        fill: isRoot ? 'hsl(220,10%,82%)' : fillOf(located.kind, name),
        label: chars < 3 ? '' : name.length <= chars ? name : `${name.slice(0, chars - 1)}…`,
        title: `${name}${located.where === '' ? '' : ` — ${located.where}`}\nself ${ms(selfUs)} ms (${share(selfUs, busyUs)} %), total ${ms(totalUs)} ms (${share(totalUs, busyUs)} %)`
      })
      let childX = x
      for (const child of kids(node).sort((a, b) => (total.get(b.id) ?? 0) - (total.get(a.id) ?? 0))) {
        pending.push({ node: child, x: childX, depth: level + 1 })
        childX += (total.get(child.id) ?? 0) * scale
      }
    }
  }

  return {
    width: WIDTH,
    height: depth * ROW,
    rowHeight: ROW,
    rects,
    hidden,
    functions: topFunctions(root, kids, self, total, busyUs, locations),
    sampledMs: ms(sampledUs),
    busyMs: ms(busyUs),
    idleMs: ms(idleUs),
    samples,
    meanIntervalUs: samples === 0 ? 0 : Math.round(sampledUs / samples)
  }
}

/**
 * Each function's self time (all its nodes) and total time (the samples it was on the stack
 * for, counted once however deep it recurs), the first TOP_FUNCTIONS by self time.
 */
function topFunctions (
  root: CpuProfileNode | undefined,
  kids: (node: CpuProfileNode) => CpuProfileNode[],
  self: Map<number, number>,
  total: Map<number, number>,
  busyUs: number,
  locations: Locations
): CpuFunction[] {
  if (root === undefined) return []
  const functions = new Map<string, { frame: CpuCallFrame, self: number, total: number }>()
  const onStack = new Map<string, number>()
  const keyOf = (frame: CpuCallFrame): string => `${frame.functionName}\u0000${frame.url}:${frame.lineNumber}:${frame.columnNumber}`
  // depth-first, with each function's count on the current path: a recursion's inner calls add no total
  const pending: Array<{ node: CpuProfileNode, leaving: boolean }> = kids(root).map((node) => ({ node, leaving: false }))
  const visited = new Set<number>()
  while (pending.length > 0) {
    const { node, leaving } = pending.pop()!
    const key = keyOf(node.callFrame)
    if (leaving) {
      onStack.set(key, onStack.get(key)! - 1)
      continue
    }
    if (visited.has(node.id)) continue
    visited.add(node.id)
    let entry = functions.get(key)
    if (entry === undefined) functions.set(key, entry = { frame: node.callFrame, self: 0, total: 0 })
    entry.self += self.get(node.id) ?? 0
    const depth = onStack.get(key) ?? 0
    if (depth === 0) entry.total += total.get(node.id) ?? 0
    onStack.set(key, depth + 1)
    pending.push({ node, leaving: true })
    for (const child of kids(node)) pending.push({ node: child, leaving: false })
  }
  return [...functions.values()]
    .filter((entry) => entry.self > 0)
    .sort((a, b) => b.self - a.self || b.total - a.total || nameOf(a.frame).localeCompare(nameOf(b.frame)))
    .slice(0, TOP_FUNCTIONS)
    .map(({ frame, self: selfUs, total: totalUs }) => {
      const located = locations.of(frame)
      const row: CpuFunction = { name: nameOf(frame), where: located.where, kind: located.kind, selfMs: ms(selfUs), selfShare: share(selfUs, busyUs), totalMs: ms(totalUs), totalShare: share(totalUs, busyUs) }
      if (located.link !== undefined) row.link = located.link
      return row
    })
}
