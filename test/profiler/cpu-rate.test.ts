/**
 * CPU profiles are rate-limited (issue 36, finding 6): each start blocks the server 0.3 to 0.85 s,
 * so at most MAX_CPU_PROFILES start per window on the kernel's clock; a request past the rate is
 * served unprofiled, and its response and CPU panel say why. The window is the injected clock's:
 * the test advances it, it never waits.
 */
import t from 'tap'
import { buildApp } from '../helpers.js'
import { host, profiled } from './helpers.js'
import { ManualClock } from '../clock.js'
import { processSampler } from '../../src/profiler/panels/cpu/sampler.js'
import { CPU_PROFILE_WINDOW_MS, MAX_CPU_PROFILES } from '../../src/profiler/panels/cpu/rate.js'

t.test('past the rate, a request that asks for a CPU profile is served unprofiled and told why', async (t) => {
  const clock = new ManualClock()
  const app = await buildApp({ debug: true, clock }, {}, (app) => { app.get('/work', async () => 'done') })
  t.teardown(() => app.close())
  const ask = async () => await profiled(app, { url: '/work', headers: { 'x-kernel-profile': 'cpu' } })
  const startedBefore = processSampler.started
  for (let i = 0; i < MAX_CPU_PROFILES; i++) {
    const { res, profile } = await ask()
    t.equal(res.headers['x-kernel-profile-refused'], undefined, `#${i + 1}: within the rate`)
    t.ok(profile.collected.cpu?.profile, `#${i + 1}: profiled`)
  }
  t.equal(processSampler.started - startedBefore, MAX_CPU_PROFILES)

  const past = await ask()
  t.equal(past.res.statusCode, 200, 'served all the same')
  t.match(past.res.headers['x-kernel-profile-refused'], /^CPU profiles are limited to 3 per 10 s \(each start blocks the server for a moment\): this request was not profiled; the next one may be in 10 s\.$/)
  t.equal(past.profile.collected.cpu?.profile, undefined, 'no CPU profile')
  t.match(past.profile.collected.cpu?.missing, /limited to 3 per 10 s/, 'the CPU panel says why')
  t.equal(processSampler.started - startedBefore, MAX_CPU_PROFILES, 'no profile started past the rate')
  t.equal((await app.inject({ url: '/work', headers: { host } })).headers['x-kernel-profile-refused'], undefined, 'a request that did not ask is told nothing')

  clock.advance(CPU_PROFILE_WINDOW_MS / 2)
  t.match((await ask()).res.headers['x-kernel-profile-refused'], /the next one may be in 5 s/, 'the wait counts down on the clock')
  clock.advance(CPU_PROFILE_WINDOW_MS / 2)
  const again = await ask()
  t.equal(again.res.headers['x-kernel-profile-refused'], undefined, 'once the window has passed, profiled again')
  t.ok(again.profile.collected.cpu?.profile)
})
