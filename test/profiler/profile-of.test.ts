/**
 * Profiles in tests: app.kernelProfiler.profileOf() reads the profile of an inject() answer, a
 * fetch Response or a token, to assert on what the request did (Symfony's getProfile()).
 */
import t from 'tap'
import { buildApp } from '../helpers.js'
import { dump } from '../../index.js'
import { startSpan } from '../../src/profiler/spans.js'
import { host } from './helpers.js'

t.test('the profile of an inject() answer, of a fetch Response, of a token', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/orders', async (request) => {
      request.kernel!.stopwatch.start('load', 'db')
      startSpan('db', 'SELECT * FROM orders').end({ rows: 2 })
      request.kernel!.stopwatch.stop('load')
      dump({ orders: 2 })
      return { orders: 2 }
    })
  })
  t.teardown(() => app.close())

  // what the README shows: "this page runs at most 3 statements and no HTTP call"
  const res = await app.inject({ url: '/orders', headers: { host } })
  const profile = await app.kernelProfiler!.profileOf(res)
  t.ok(profile.collected.db!.statements.length <= 3, 'at most 3 statements')
  t.equal(profile.collected.db!.statements.length, 1)
  t.equal(profile.collected.http_client!.calls.length, 0, 'no HTTP call')
  t.equal(profile.collected.dump!.dumps.length, 1)
  t.equal(profile.statusCode, 200)
  t.equal(profile.token, res.headers['x-debug-token'])

  await app.listen({ port: 0, host: '127.0.0.1' })
  const fetched = await fetch(`http://127.0.0.1:${(app.server.address() as { port: number }).port}/orders`)
  t.equal(fetched.status, 200)
  const viaFetch = await app.kernelProfiler!.profileOf(fetched)
  t.equal(viaFetch.token, fetched.headers.get('x-debug-token'))
  t.equal(viaFetch.method, 'GET')

  t.same(await app.kernelProfiler!.profileOf(profile.token), profile, 'by its token')
})

t.test('a response without a profile, or a token without one, is a clear error', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const profilerPage = await app.inject({ url: '/_profiler/', headers: { host } })
  t.equal(profilerPage.statusCode, 200)
  await t.rejects(app.kernelProfiler!.profileOf(profilerPage), { code: 'KERNEL_NOT_PROFILED', message: /has no X-Debug-Token header: it was not profiled/ })
  await t.rejects(app.kernelProfiler!.profileOf('abcdef'), { code: 'KERNEL_NOT_PROFILED', message: 'fastify-kernel: the memory storage has no profile "abcdef" (dropped, expired, or kept by another process)' })
})
