import type { SourceExcerpts } from '../../../errors/source-excerpt.js'
import type { CpuCallFrame, CpuProfile, CpuProfileNode } from './cpu-profile.js'
import { CallTree } from './call-tree.js'
import { Locations, fillOf, nameOf } from './frames.js'
import type { FrameKind, Located } from './frames.js'

/** One frame of the flame graph, placed (SVG user units). */
export interface FlameRect {
  /** its place in `rects`; its parent's is smaller (a parent is placed before its children) */
  index: number
  /** its caller's index, -1 for the root */
  parent: number
  /** its row, the root's 0 */
  depth: number
  /** the function's name, whole (the page's search and zoom relabel frames with it) */
  name: string
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
  rects: FlameRect[]
  /** frames narrower than MIN_WIDTH, or past the depth or count bound: not drawn (their time is in their parents') */
  hidden: number
  /** some frame runs the app's own code (the page then starts on "app code only") */
  hasApp: boolean
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

function ms (us: number): number {
  return Math.round(us) / 1000
}

function share (part: number, whole: number): number {
  return whole <= 0 ? 0 : Math.round((part / whole) * 1000) / 10
}

function label (name: string, width: number): string {
  const chars = Math.floor((width - 6) / CHAR_WIDTH)
  if (chars < 3) return ''
  return name.length <= chars ? name : `${name.slice(0, chars - 1)}…`
}

/**
 * The flame graph of a V8 CPU profile, made when its panel is shown: the call tree with each
 * node as wide as its time (root on top, the heaviest child first, frames too narrow to see
 * left out), each frame coloured by whose code it is and labelled, its tooltip giving where the
 * function is (mapped to its TypeScript source where the source maps say) with its self and
 * total time; and the functions with the most self time. Idle time is counted apart.
 */
export function flameGraph (profile: CpuProfile, sources: SourceExcerpts | undefined): FlameGraph {
  const tree = new CallTree(profile)
  const locations = new Locations(sources)
  const { rects, hidden, depth } = layout(tree, locations)
  return {
    width: WIDTH,
    height: depth * ROW,
    rects,
    hidden,
    hasApp: rects.some((rect) => rect.kind === 'app'),
    functions: topFunctions(tree, locations),
    sampledMs: ms(tree.sampledUs),
    busyMs: ms(tree.busyUs),
    idleMs: ms(tree.idleUs),
    samples: tree.samples,
    meanIntervalUs: tree.samples === 0 ? 0 : Math.round(tree.sampledUs / tree.samples)
  }
}

function layout (tree: CallTree, locations: Locations): { rects: FlameRect[], hidden: number, depth: number } {
  const rects: FlameRect[] = []
  let hidden = 0
  let depth = 0
  const { root, busyUs } = tree
  if (root === undefined || busyUs <= 0) return { rects, hidden, depth }
  const scale = WIDTH / busyUs
  const pending: Array<{ node: CpuProfileNode, x: number, level: number, parent: number }> = [{ node: root, x: 0, level: 0, parent: -1 }]
  const placed = new Set<number>()
  while (pending.length > 0) {
    const { node, x, level, parent } = pending.pop()!
    const width = tree.totalOf(node) * scale
    if (width < MIN_WIDTH || level >= MAX_DEPTH || rects.length >= MAX_RECTS || placed.has(node.id)) {
      hidden++
      continue
    }
    placed.add(node.id)
    depth = Math.max(depth, level + 1)
    const isRoot = node === root
    const name = isRoot ? 'all' : nameOf(node.callFrame)
    const located: Located = isRoot ? { where: '', kind: 'vm' } : locations.of(node.callFrame)
    const selfUs = tree.selfOf(node)
    const totalUs = tree.totalOf(node)
    const index = rects.length
    rects.push({
      index,
      parent,
      depth: level,
      name,
      x: Math.round(x * 100) / 100,
      y: level * ROW,
      width: Math.round(width * 100) / 100,
      kind: located.kind,
      fill: isRoot ? 'hsl(220,10%,82%)' : fillOf(located.kind, name),
      label: label(name, width),
      title: `${name}${located.where === '' ? '' : ` — ${located.where}`}\nself ${ms(selfUs)} ms (${share(selfUs, busyUs)} %), total ${ms(totalUs)} ms (${share(totalUs, busyUs)} %)`,
      textX: Math.round((x + 3) * 100) / 100,
      textY: level * ROW + 12
    })
    let childX = x
    for (const child of tree.children(node).sort((a, b) => tree.totalOf(b) - tree.totalOf(a))) {
      pending.push({ node: child, x: childX, level: level + 1, parent: index })
      childX += tree.totalOf(child) * scale
    }
  }
  return { rects, hidden, depth }
}

/**
 * Each function's self time (all its nodes) and total time (the samples it was on the stack
 * for, counted once however deep it recurses), the first TOP_FUNCTIONS by self time.
 */
function topFunctions (tree: CallTree, locations: Locations): CpuFunction[] {
  if (tree.root === undefined) return []
  const functions = new Map<string, { frame: CpuCallFrame, self: number, total: number }>()
  const onStack = new Map<string, number>()
  const keyOf = (frame: CpuCallFrame): string => `${frame.functionName}\u0000${frame.url}:${frame.lineNumber}:${frame.columnNumber}`
  // depth-first, with each function's count on the current path: a recursion's inner calls add no total
  const pending: Array<{ node: CpuProfileNode, leaving: boolean }> = tree.children(tree.root).map((node) => ({ node, leaving: false }))
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
    entry.self += tree.selfOf(node)
    const depth = onStack.get(key) ?? 0
    if (depth === 0) entry.total += tree.totalOf(node)
    onStack.set(key, depth + 1)
    pending.push({ node, leaving: true })
    for (const child of tree.children(node)) pending.push({ node: child, leaving: false })
  }
  return [...functions.values()]
    .filter((entry) => entry.self > 0)
    .sort((a, b) => b.self - a.self || b.total - a.total || nameOf(a.frame).localeCompare(nameOf(b.frame)))
    .slice(0, TOP_FUNCTIONS)
    .map(({ frame, self, total }) => {
      const located = locations.of(frame)
      const row: CpuFunction = { name: nameOf(frame), where: located.where, kind: located.kind, selfMs: ms(self), selfShare: share(self, tree.busyUs), totalMs: ms(total), totalShare: share(total, tree.busyUs) }
      if (located.link !== undefined) row.link = located.link
      return row
    })
}
