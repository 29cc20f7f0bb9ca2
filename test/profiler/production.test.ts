import t from 'tap'
import { buildApp } from '../helpers.js'
import { host } from './helpers.js'

t.test('production: no profiler routes, no debug headers, no listeners, even when asked', async (t) => {
  for (const profiler of [undefined, true, { storage: 'memory' as const }]) {
    const app = await buildApp({ debug: false, profiler })
    t.teardown(() => app.close())
    t.equal(app.kernelProfiler.enabled, false, `${JSON.stringify(profiler)}: no profiler`)
    for (const stage of ['kernel.request', 'kernel.response', 'kernel.terminate'] as const) {
      t.notOk(app.kernel.listeners(stage).some((l) => /profil/.test(l.name)), `${stage}: no profiler listener`)
    }
    const ok = await app.inject({ url: '/about', headers: { host } })
    t.notOk(ok.headers['x-debug-token'])
    t.notOk(ok.headers['x-debug-token-link'])
    for (const url of ['/_profiler', '/_profiler/', '/_profiler/latest', '/_profiler/abcdef']) {
      const res = await app.inject({ url, headers: { host, accept: 'application/json' } })
      t.equal(res.statusCode, 404, url)
      t.equal(res.json().detail, 'Not Found')
      t.notOk(res.headers['x-debug-token'])
    }
  }
})

t.test('debug: the profiler listeners sit at their Symfony priorities', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  t.same(app.kernel.listeners('kernel.request')[0], { stage: 'kernel.request', name: 'profiler token', priority: 4096, origin: 'profiler' })
  t.ok(app.kernel.listeners('kernel.response').some((l) => l.name === 'profiler' && l.priority === -100))
  t.same(app.kernel.listeners('kernel.terminate').at(-1), { stage: 'kernel.terminate', name: 'profile save', priority: -1024, origin: 'profiler' })
})
