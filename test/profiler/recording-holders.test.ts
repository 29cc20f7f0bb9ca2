/**
 * What a panel keeps in a unit's state is counted and cut by its own recording extension (issue
 * 36's memory bound, in the panel-folder layout): the memory storage counts what each holder
 * hands to `held`, and has a recording holding more than a quarter of `maxMemory` cut by each
 * holder's `shrink`; a holder that throws costs the recording nothing but its own count.
 */
import t from 'tap'
import type { Collector, ProfilerIntegration } from '../../index.js'
import { buildApp } from '../helpers.js'
import { profiled } from './helpers.js'

declare module '../../src/kernel/context.js' {
  interface KernelState { heldBlob: string, unheldBlob: string }
}
declare module '../../src/kernel/collector.js' {
  interface CollectedData { blobs: { held: number, unheld: number } }
}

const fastify = { pluginTimeout: 120_000 }
const MAX_MEMORY = 4 * 1024 * 1024
const TWO_MB = 2 * 1024 * 1024

const blobsCollector: Collector<{ held: number, unheld: number }> = {
  name: 'blobs',
  label: 'Blobs',
  order: 93,
  kinds: 'all',
  // read when the profile is built: after the storage kept (and maybe cut) the recording
  deferred: true,
  collect: ({ context }) => ({ held: context.get('heldBlob')?.length ?? 0, unheld: context.get('unheldBlob')?.length ?? 0 })
}

function blobs (calls: { held: number, shrunk: number }, failing = false): ProfilerIntegration {
  return {
    name: 'blobs',
    setup: () => ({
      extensions: [{
        name: 'blobs',
        held (context, count) {
          calls.held++
          if (failing) throw new Error('a holder that fails')
          count(context.get('heldBlob'))
        },
        shrink (context) {
          calls.shrunk++
          const blob = context.get('heldBlob')
          if (blob !== undefined) context.set('heldBlob', blob.slice(0, 1024))
        }
      }],
      collectors: [blobsCollector]
    })
  }
}

t.test('a holder\'s values are counted with the recording, and cut by it past a quarter of maxMemory', async (t) => {
  const calls = { held: 0, shrunk: 0 }
  const app = await buildApp({ debug: true, profiler: { maxMemory: MAX_MEMORY, integrations: [blobs(calls)] } }, fastify, (app) => {
    app.get('/held', async (request) => { request.kernel!.set('heldBlob', 'h'.repeat(TWO_MB)); return 'ok' })
    app.get('/small', async (request) => { request.kernel!.set('heldBlob', 'h'.repeat(100)); return 'ok' })
  })
  t.teardown(() => app.close())

  const small = await profiled(app, { url: '/small' })
  t.ok(calls.held > 0, 'the holder was asked what it keeps')
  t.equal(calls.shrunk, 0, 'a small recording is not cut')
  t.equal(small.profile.cut, undefined)
  t.equal(small.profile.collected.blobs?.held, 100)

  const held = await profiled(app, { url: '/held' })
  t.equal(calls.shrunk, 1, 'its 2 MB counted: over a quarter of maxMemory, the holder cut it')
  t.equal(held.profile.collected.blobs?.held, 1024, 'the panel shows what the holder kept')
  t.match(held.profile.cut, /^This unit held 2\.\d MB, more than a quarter of the memory storage's maxMemory: .* to 0\.0 MB\.$/, 'the profile says it was cut, and to what')
})

t.test('a holder that throws: the recording is kept, its value not counted', async (t) => {
  const calls = { held: 0, shrunk: 0 }
  const app = await buildApp({ debug: true, profiler: { maxMemory: MAX_MEMORY, integrations: [blobs(calls, true)] } }, fastify, (app) => {
    app.get('/held', async (request) => { request.kernel!.set('heldBlob', 'h'.repeat(TWO_MB)); return 'ok' })
  })
  t.teardown(() => app.close())
  const held = await profiled(app, { url: '/held' })
  t.ok(calls.held > 0)
  t.equal(calls.shrunk, 0, 'nothing counted, nothing cut')
  t.equal(held.profile.collected.blobs?.held, TWO_MB, 'the profile is kept whole')
})
