/**
 * The CPU panel's parts without a request: the flame graph made from a V8 profile (self and
 * total times, recursion, idle, frames too narrow), what a profile keeps (its bounds), and the
 * sampler (one profile at a time, the stop after its longest, the close).
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import { SourceExcerpts, packageFolderOf } from '../../src/errors/source-excerpt.js'
import { Locations } from '../../src/profiler/panels/cpu/frames.js'
import { KernelContext } from '../../src/kernel/context.js'
import type { RecordedUnit } from '../../src/kernel/collector.js'
import type { CpuProfile, CpuProfileNode } from '../../src/profiler/panels/cpu/cpu-profile.js'
import { MAX_PROFILE_NODES } from '../../src/profiler/panels/cpu/cpu-profile.js'
import { flameGraph } from '../../src/profiler/panels/cpu/flame-graph.js'
import { cpuCollector } from '../../src/profiler/panels/cpu/collector.js'
import { CpuSampler } from '../../src/profiler/panels/cpu/sampler.js'
import type { CpuRun } from '../../src/profiler/panels/cpu/sampler.js'

function node (id: number, functionName: string, url: string, children: number[] = [], lineNumber = 0): CpuProfileNode {
  return { id, callFrame: { functionName, scriptId: '1', url, lineNumber, columnNumber: 0 }, children }
}

// (root) → (idle), main → [recurse → recurse, lib, tiny], (program); samples 100 µs apart
const PROFILE: CpuProfile = {
  nodes: [
    node(1, '(root)', '', [2, 3, 4], -1),
    node(2, '(idle)', '', [], -1),
    node(3, 'main', 'file:///app/main.js', [5, 6, 8]),
    node(4, '(program)', '', [], -1),
    node(5, 'recurse', 'file:///app/recurse.js', [7], 4),
    node(6, 'parse', 'file:///app/node_modules/lib/index.js', [], 9),
    node(7, 'recurse', 'file:///app/recurse.js', [], 4),
    node(8, 'tiny', 'node:internal/timers', [], 2)
  ],
  startTime: 0,
  endTime: 810,
  samples: [3, 5, 7, 7, 6, 2, 2, 4],
  timeDeltas: [10, 100, 100, 100, 100, 100, 100, 100]
}

t.test('the flame graph: each frame as wide as its time, the heaviest first, idle apart, too narrow left out', async (t) => {
  const graph = flameGraph(PROFILE, undefined)
  t.equal(graph.samples, 8)
  t.equal(graph.busyMs, 0.6, 'every sample but the idle ones')
  t.equal(graph.idleMs, 0.2)
  t.equal(graph.sampledMs, 0.8, 'from the first sample to the end')
  t.equal(graph.meanIntervalUs, 100)
  const byLabel = new Map(graph.rects.map((rect) => [`${rect.title.split(' — ')[0].split('\n')[0]}@${rect.y}`, rect]))
  t.same([...byLabel.keys()].sort(), ['(program)@17', 'all@0', 'main@17', 'parse@34', 'recurse@34', 'recurse@51'].sort(), 'idle and the frame without samples are not drawn')
  t.equal(graph.hidden, 1, 'the frame narrower than a pixel is counted')
  t.same(byLabel.get('all@0'), { ...byLabel.get('all@0'), x: 0, width: 1000 })
  t.same(byLabel.get('main@17'), { ...byLabel.get('main@17'), x: 0, width: 833.33, kind: 'app' })
  t.same(byLabel.get('(program)@17'), { ...byLabel.get('(program)@17'), x: 833.33, width: 166.67, kind: 'vm' })
  t.same(byLabel.get('recurse@34'), { ...byLabel.get('recurse@34'), x: 0, width: 500 }, 'the heaviest child first')
  t.same(byLabel.get('parse@34'), { ...byLabel.get('parse@34'), x: 500, width: 166.67, kind: 'dependency' })
  t.equal(byLabel.get('recurse@51')!.width, 333.33)
  t.equal(graph.height, 4 * 17)
  t.match(byLabel.get('main@17')!.title, 'main — /app/main.js:1\nself 0.1 ms (16.7 %), total 0.5 ms (83.3 %)', 'the tooltip: where, self and total')
  t.equal(byLabel.get('main@17')!.label, 'main')

  const rows = new Map(graph.functions.map((row) => [row.name, row]))
  t.same(graph.functions.map((row) => row.name), ['recurse', 'main', '(program)', 'parse'], 'by self time, then total time, then name; idle is no function')
  t.same(rows.get('recurse'), { name: 'recurse', where: '/app/recurse.js:5', kind: 'app', selfMs: 0.3, selfShare: 50, totalMs: 0.3, totalShare: 50 }, 'a recursion\'s total counts each sample once')
  t.same(rows.get('main'), { name: 'main', where: '/app/main.js:1', kind: 'app', selfMs: 0.1, selfShare: 16.7, totalMs: 0.5, totalShare: 83.3 })
  t.equal(rows.get('parse')!.kind, 'dependency')
})

t.test('a damaged profile makes a smaller graph, never a loop or a throw', async (t) => {
  const cyclic: CpuProfile = { ...PROFILE, nodes: PROFILE.nodes.map((n) => n.id === 7 ? { ...n, children: [5, 99] } : n) }
  t.ok(flameGraph(cyclic, undefined).rects.length > 0, 'a cycle is walked once')
  const empty = flameGraph({ nodes: [], startTime: 0, endTime: 0, samples: [], timeDeltas: [] }, undefined)
  t.same([empty.rects.length, empty.functions.length, empty.busyMs], [0, 0, 0])
  t.equal(flameGraph({ ...PROFILE, samples: [3, 5], timeDeltas: [10] }, undefined).samples, 1, 'samples without their time are left out')
})

t.test('what a profile keeps: the profile as V8 made it, or why there is none (a huge one is not kept)', async (t) => {
  const collector = cpuCollector(undefined)
  const collect = (capture: unknown): unknown => {
    const context = new KernelContext()
    context.set('cpuProfile', capture as never)
    return collector.collect({ kind: 'request', context } as unknown as RecordedUnit)
  }
  t.equal(collector.collect({ kind: 'request', context: new KernelContext() } as unknown as RecordedUnit), undefined, 'nothing asked: no panel')
  t.same(collect({ asked: 'header', intervalUs: 100, result: { profile: PROFILE, cut: false, startMs: 1.23456 } }), { asked: 'header', intervalUs: 100, profile: PROFILE, startMs: 1.235 })
  t.same(collect({ asked: 'header', intervalUs: 100, result: { profile: PROFILE, cut: true } }), { asked: 'header', intervalUs: 100, profile: PROFILE, cut: true }, 'one cut at its longest says so')
  const huge: CpuProfile = { ...PROFILE, nodes: Array.from({ length: MAX_PROFILE_NODES + 1 }, (_, i) => node(i + 1, 'f', '')) }
  t.same(collect({ asked: 'toolbar', intervalUs: 100, result: { profile: huge, cut: false } }), {
    asked: 'toolbar',
    intervalUs: 100,
    tooLarge: { nodes: MAX_PROFILE_NODES + 1, samples: 8 },
    missing: `the profile has ${MAX_PROFILE_NODES + 1} call-tree nodes and 8 samples, more than the ${MAX_PROFILE_NODES} and 400000 a profile keeps`
  })
  t.same(collect({ asked: 'header', intervalUs: 100, result: { cut: false, error: 'boom' } }), { asked: 'header', intervalUs: 100, missing: 'boom' })
  t.same(collect({ asked: 'header', intervalUs: 100, refused: { reason: 'busy', busyWith: 'abcdef' } }), { asked: 'header', intervalUs: 100, missing: 'busy', busyWith: 'abcdef' })
  const panel = collector.panel!({ asked: 'header', intervalUs: 100, profile: { ...PROFILE, nodes: 'damaged' } as unknown as CpuProfile }, { token: 'abcdef' } as never) as { graph?: unknown, download?: string }
  t.same([panel.graph, panel.download], [undefined, undefined], 'stored data that is no profile shows no graph')
})

t.test('the sampler: one profile at a time; a profile running its longest is stopped then and handed to its holder; closing stops it', async (t) => {
  const timers: Array<() => void> = []
  const sampler = new CpuSampler(100, 50, (fn) => { timers.push(fn); return () => {} })
  const release = sampler.retain()
  t.notOk(sampler.connected, 'nothing opened before a profile is asked')
  const first = sampler.start('aaaaaa') as CpuRun
  t.ok(sampler.connected)
  t.same(sampler.start('bbbbbb'), { busyWith: 'aaaaaa', reason: 'another request\'s CPU profile was running (aaaaaa)' }, 'a second is refused, naming the first')
  timers[0]() // the first ran its longest
  const second = sampler.start('cccccc') as CpuRun
  t.equal(second.holder, 'cccccc', 'the profiler is free again')
  const firstResult = await first.stop()
  t.equal(firstResult.cut, true, 'the first one\'s profile, cut')
  t.ok(Array.isArray(firstResult.profile?.samples))
  t.equal(await first.stop(), firstResult, 'stopped once')
  release() // the last profiler closes: the running one is stopped, the session closed
  t.notOk(sampler.connected)
  t.same(await second.stop(), { cut: true, error: 'the profiler was closed while the profile ran' })
  const again = sampler.retain()
  const third = sampler.start('dddddd') as CpuRun
  const thirdResult = await third.stop()
  t.equal(thirdResult.cut, false)
  t.ok(thirdResult.profile !== undefined, 'a session opens again when asked')
  again()
})

t.test('where a frame is: a package\'s source map naming sources outside its package (drizzle-orm\'s) is not followed; the kernel\'s frames are the kernel\'s even installed in node_modules', async (t) => {
  const root = process.cwd()
  const sources = new SourceExcerpts({ root })
  const session = join(root, 'node_modules/drizzle-orm/pg-core/session.js')
  const line = readFileSync(session, 'utf8').split('\n').findIndex((text) => text.includes('async queryWithCache('))
  const drizzle = new Locations(sources).of({ functionName: 'queryWithCache', scriptId: '1', url: pathToFileURL(session).href, lineNumber: line, columnNumber: 2 })
  t.same(drizzle, { where: `node_modules/drizzle-orm/pg-core/session.js:${line + 1}`, kind: 'dependency' }, 'its compiled file, not node_modules/src/pg-core/session.ts (the map\'s ../../src/ made for a dist/ folder it does not ship)')
  t.equal(packageFolderOf(session), join(root, 'node_modules/drizzle-orm') + sep)
  t.equal(packageFolderOf(join(root, 'node_modules/@prisma/client/runtime/client.js')), join(root, 'node_modules/@prisma/client') + sep, 'a scoped package')
  t.equal(packageFolderOf(join(root, 'src/kernel/kernel.ts')), undefined)

  // the kernel installed in an app: its package root is in the app's node_modules
  const installed = '/srv/app/node_modules/fastify-kernel'
  const frames = await t.mockImport<typeof import('../../src/profiler/panels/cpu/frames.js')>('../../src/profiler/panels/cpu/frames.js', {
    '../../src/errors/kernel-files.ts': { packageRoot: installed }
  })
  const at = (url: string): string => new frames.Locations(undefined).of({ functionName: 'f', scriptId: '1', url, lineNumber: 3, columnNumber: 0 }).kind
  t.equal(at(`file://${installed}/dist/src/profiler/recorder.js`), 'kernel', 'the kernel\'s compiled frames: kernel, not dependency')
  t.equal(at(`file://${installed}/dist/plugins/kernel.js`), 'kernel')
  t.equal(at('file:///srv/app/node_modules/fastify/lib/route.js'), 'dependency', 'Fastify\'s: a dependency')
  t.equal(at('file:///srv/app/routes/books.js'), 'app')
})
