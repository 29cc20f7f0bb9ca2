import type { CpuProfile, CpuProfileNode } from './cpu-profile.js'

const IDLE = '(idle)'

/**
 * A V8 profile's call tree with each node's time: its self time (the samples that hit it, each
 * lasting until the next one, as DevTools counts) and its total time (itself and below).
 * `(idle)`, the thread waiting for I/O, is left out of the tree and counted apart. Made without
 * recursion, and a damaged profile's cycle is walked once.
 */
export class CallTree {
  readonly root: CpuProfileNode | undefined
  /** microseconds, by node id */
  readonly self = new Map<number, number>()
  readonly total = new Map<number, number>()
  readonly samples: number
  /** from the first sample to the end, µs */
  readonly sampledUs: number
  readonly idleUs: number
  /** every sample but the idle ones, µs */
  readonly busyUs: number
  private readonly byId = new Map<number, CpuProfileNode>()

  constructor (profile: CpuProfile) {
    const children = new Set<number>()
    for (const node of profile.nodes) {
      this.byId.set(node.id, node)
      for (const child of node.children ?? []) children.add(child)
    }
    this.root = profile.nodes.find((node) => !children.has(node.id))
    const { samples, sampledUs } = this.countSamples(profile)
    this.samples = samples
    this.sampledUs = sampledUs
    this.sumTotals()
    let idleUs = 0
    for (const node of profile.nodes) if (isIdle(node)) idleUs += this.self.get(node.id) ?? 0
    this.idleUs = idleUs
    this.busyUs = this.root === undefined ? 0 : this.total.get(this.root.id) ?? 0
  }

  /** A node's children that are in the tree (idle left out). */
  children (node: CpuProfileNode): CpuProfileNode[] {
    const found: CpuProfileNode[] = []
    for (const id of node.children ?? []) {
      const child = this.byId.get(id)
      if (child !== undefined && !isIdle(child)) found.push(child)
    }
    return found
  }

  totalOf (node: CpuProfileNode): number {
    return this.total.get(node.id) ?? 0
  }

  selfOf (node: CpuProfileNode): number {
    return this.self.get(node.id) ?? 0
  }

  private countSamples (profile: CpuProfile): { samples: number, sampledUs: number } {
    const samples = profile.samples ?? []
    const deltas = profile.timeDeltas ?? []
    const count = Math.min(samples.length, deltas.length)
    if (count === 0) return { samples: 0, sampledUs: 0 }
    const times = new Float64Array(count)
    let time = profile.startTime
    for (let i = 0; i < count; i++) {
      time += Number(deltas[i]) || 0
      times[i] = time
    }
    for (let i = 0; i < count; i++) {
      const duration = Math.max(0, (i + 1 < count ? times[i + 1] : profile.endTime) - times[i])
      this.self.set(samples[i], (this.self.get(samples[i]) ?? 0) + duration)
    }
    return { samples: count, sampledUs: Math.max(0, profile.endTime - times[0]) }
  }

  /** Each node's total, children before their parent. */
  private sumTotals (): void {
    const order: CpuProfileNode[] = []
    const visited = new Set<number>()
    for (const pending = this.root === undefined ? [] : [this.root]; pending.length > 0;) {
      const node = pending.pop()!
      if (visited.has(node.id)) continue
      visited.add(node.id)
      order.push(node)
      for (const child of this.children(node)) pending.push(child)
    }
    for (let i = order.length - 1; i >= 0; i--) {
      const node = order[i]
      let sum = this.selfOf(node)
      for (const child of this.children(node)) sum += this.total.get(child.id) ?? 0
      this.total.set(node.id, sum)
    }
  }
}

function isIdle (node: CpuProfileNode): boolean {
  return node.callFrame.url === '' && node.callFrame.functionName === IDLE
}
