import t from 'tap'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadServiceEnv } from '../src/env.js'
import { buildService } from '../src/build-service.js'

t.test('profiler env variables are read and validated', async (t) => {
  const env = loadServiceEnv({ PROFILER_STORAGE: 'memory', PROFILER_DIR: '/tmp/p', PROFILER_MAX_PROFILES: '50', PROFILER_MAX_AGE: '3600', PROFILER_ALLOWED_NETWORKS: '10.0.0.0/8, 127.0.0.1' }, false)
  t.equal(env.PROFILER_STORAGE, 'memory')
  t.equal(env.PROFILER_DIR, '/tmp/p')
  t.equal(env.PROFILER_MAX_PROFILES, 50)
  t.equal(env.PROFILER_MAX_AGE, 3600)
  t.same(env.PROFILER_ALLOWED_NETWORKS, ['10.0.0.0/8', '127.0.0.1'])
  t.same(loadServiceEnv({ PROFILER_ALLOWED_HOSTS: ' devbox.lan,, box.local ' }, false).PROFILER_ALLOWED_HOSTS, ['devbox.lan', 'box.local'])
  const lan = await buildService(loadServiceEnv({ APP_ENV: 'test', APP_DEBUG: 'true', PROFILER_STORAGE: 'memory', PROFILER_ALLOWED_HOSTS: 'devbox.lan' }, false), { logger: false })
  t.teardown(() => lan.close())
  t.equal((await lan.inject({ url: '/_profiler/', headers: { host: 'devbox.lan:8000' }, remoteAddress: '192.168.1.20' })).statusCode, 200)
  t.equal((await lan.inject({ url: '/_profiler/', headers: { host: 'example.com' }, remoteAddress: '127.0.0.1' })).statusCode, 404, 'a public name from loopback: a proxy')
  await t.rejects(buildService(loadServiceEnv({ APP_ENV: 'test', APP_DEBUG: 'true', PROFILER_STORAGE: 'memory', PROFILER_ALLOWED_HOSTS: 'devbox.lan:8000' }, false), { logger: false }), { message: /profiler\.allowedHosts.*"devbox\.lan:8000"/ })
  t.throws(() => loadServiceEnv({ PROFILER_STORAGE: 'disk' }, false), { message: /PROFILER_STORAGE/ })
  t.same(['all', ' Errors', 'on-demand', 'sample:10', 'slow:250'].map((value) => loadServiceEnv({ PROFILER_CAPTURE: value }, false).PROFILER_CAPTURE), ['all', 'errors', 'on-demand', { sample: 10 }, { slowerThan: 250 }])
  t.throws(() => loadServiceEnv({ PROFILER_CAPTURE: 'sometimes' }, false), { message: /PROFILER_CAPTURE must be all, errors, on-demand, sample:<percent> or slow:<ms>, got "sometimes"/ })
  const sampled = await buildService(loadServiceEnv({ APP_ENV: 'test', APP_DEBUG: 'true', PROFILER_STORAGE: 'memory', PROFILER_CAPTURE: 'on-demand' }, false), { logger: false })
  t.teardown(() => sampled.close())
  t.match((await sampled.inject({ url: '/_profiler/', headers: { host: 'localhost' } })).body, 'Recording: <b>on demand</b>', 'PROFILER_CAPTURE is the profiler\'s capture mode')
  const health = await lan.inject({ url: '/_health', headers: { host: 'localhost', 'x-kernel-profile': '1' } })
  t.equal(health.statusCode, 200)
  t.equal(health.headers['x-debug-token'], undefined, 'the health probe is never profiled (its route says profiler: false), even when asked')
  t.ok((await lan.inject({ url: '/robots.txt', headers: { host: 'localhost' } })).headers['x-debug-token'], 'while the other requests are')
  t.throws(() => loadServiceEnv({ PROFILER_MAX_PROFILES: '0' }, false), { message: /PROFILER_MAX_PROFILES/ })
  await t.rejects(buildService(loadServiceEnv({ APP_ENV: 'test', APP_DEBUG: 'true', PROFILER_STORAGE: 'memory', PROFILER_ALLOWED_NETWORKS: 'everyone' }, false), { logger: false }), { message: /not a CIDR: "everyone"/ })
})

t.test('the service in debug: /robots.txt, then its profile through X-Debug-Token-Link (file storage)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'service-profiler-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const app = await buildService(loadServiceEnv({ APP_ENV: 'test', APP_DEBUG: 'true', PROFILER_DIR: dir }, false), { logger: false })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`

  const robots = await fetch(`${base}/robots.txt`)
  t.equal(robots.status, 404)
  const link = robots.headers.get('x-debug-token-link')!
  const token = robots.headers.get('x-debug-token')!
  t.equal(link, `${base}/_profiler/${token}`)
  await app.kernelProfiler!.settled()
  const segments = readdirSync(join(dir, 'segments'))
  t.ok(segments.some((name) => readFileSync(join(dir, 'segments', name), 'utf8').includes(`"token":"${token}"`)), 'stored in a segment under the configured folder')

  const exception = await fetch(link)
  t.equal(exception.status, 200)
  const exceptionPage = await exception.text()
  t.match(exceptionPage, 'data-panel="exception"')
  t.match(exceptionPage, `No route found for &quot;GET ${base.replace('127.0.0.1', '127.0.0.1')}/robots.txt&quot;`)
  t.match(exceptionPage, 'No routes found for &quot;/robots.txt/&quot;.')

  const routing = await (await fetch(`${link}?panel=routing`)).text()
  t.match(routing, /<tr class="verdict-path"><td class="mono">hello<\/td><td class="mono">GET<\/td><td class="mono">\/hello\/\{name\}<\/td><td><span class="verdict">path differs<\/span><\/td><td class="mono">segment 1 is &quot;robots.txt&quot;, the route expects &quot;hello&quot;<\/td><\/tr>/)
  t.match(routing, /<td class="mono">contact<\/td>.*the path stops before segment 2/)

  const events = await (await fetch(`${link}?panel=events`)).text()
  t.match(events, 'kernel.request › kernel.exception › kernel.response › kernel.finish_request › kernel.terminate')
})
