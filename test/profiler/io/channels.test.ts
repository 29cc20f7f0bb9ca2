/**
 * The libraries' channels are subscribed once per process while a profiler is alive, and never
 * in production: there, every channel's hasSubscribers stays false, so the libraries skip their
 * tracing altogether.
 */
import t from 'tap'
import { channel, tracingChannel } from 'node:diagnostics_channel'
import { createKernelApp } from '../../../index.js'
import { profiled } from '../helpers.js'
import { startUpstream } from './upstream.js'

const PLAIN = ['undici:request:create', 'undici:request:headers', 'undici:request:trailers', 'undici:request:error', 'http.client.request.start', 'http.client.response.finish', 'http.client.request.error']
const TRACING = ['mysql2:query', 'mysql2:execute', 'mysql2:pool:connect', 'fastify-kernel:db:query', 'ioredis:command', 'node-redis:command', 'node-redis:batch']

/** The channels that have a subscriber (or a bound store). */
function subscribed (): string[] {
  return [...PLAIN.filter((name) => channel(name).hasSubscribers), ...TRACING.filter((name) => tracingChannel(name).hasSubscribers)]
}

t.test('production: nothing subscribes, even while requests make calls', async (t) => {
  const upstream = await startUpstream(t)
  const app = await createKernelApp({ kernel: { debug: false } })
  app.get('/calls', async () => (await fetch(`${upstream.url}/ok`)).text())
  t.teardown(() => app.close())
  t.same(subscribed(), [], 'no channel has a subscriber')
  const res = await app.inject({ url: '/calls', headers: { host: 'example.test' } })
  t.equal(res.body, 'upstream body')
  t.same(subscribed(), [], 'still none')
})

t.test('debug: subscribed once while any profiler is alive, whatever the number of apps; none after the last closes', async (t) => {
  const upstream = await startUpstream(t)
  const one = await createKernelApp({ kernel: { debug: true } })
  const two = await createKernelApp({ kernel: { debug: true } })
  for (const app of [one, two]) app.get('/call', async () => (await fetch(`${upstream.url}/ok`)).text())
  t.same(subscribed(), [...PLAIN, ...TRACING], 'every channel, while the apps are open')
  const { profile } = await profiled(one, { url: '/call' })
  t.equal(profile.collected.http_client!.calls.length, 1, 'two apps in one process record a call once')
  await one.close()
  t.same(subscribed(), [...PLAIN, ...TRACING], 'the other app still profiles')
  const again = await profiled(two, { url: '/call' })
  t.equal(again.profile.collected.http_client!.calls.length, 1)
  await two.close()
  t.same(subscribed(), [], 'unsubscribed with the last one')
  await two.close()
  t.same(subscribed(), [], 'closing twice lets go once')
})

t.test('a profiler that is off (debug with profiler: false) subscribes nothing', async (t) => {
  const app = await createKernelApp({ kernel: { debug: true, profiler: false } })
  t.teardown(() => app.close())
  t.same(subscribed(), [])
})
