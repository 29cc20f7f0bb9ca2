import t from 'tap'
import { loadServiceEnv } from '../../src/config/env.js'
import { buildService } from '../../src/service/build-service.js'

t.test('defaults: dev, debug on, 127.0.0.1:8000', async (t) => {
  const env = loadServiceEnv({}, false)
  t.same(env, {
    APP_ENV: 'dev', APP_DEBUG: true, APP_FORCE_DEBUG: false, HOST: '127.0.0.1', PORT: 8000, TRUST_PROXY: false, LOG_LEVEL: 'info',
    PROFILER_STORAGE: 'file', PROFILER_DIR: 'var/profiler', PROFILER_MAX_PROFILES: 2000, PROFILER_MAX_AGE: 172800, PROFILER_ALLOWED_NETWORKS: []
  })
  t.equal(loadServiceEnv({ APP_ENV: 'prod' }, false).APP_DEBUG, false, 'debug is off by default outside dev')
})

t.test('values are coerced and validated with a clear message', async (t) => {
  const env = loadServiceEnv({ PORT: '8080', APP_DEBUG: 'false', TRUST_PROXY: '2', LOG_LEVEL: 'warn' }, false)
  t.equal(env.PORT, 8080)
  t.equal(env.APP_DEBUG, false)
  t.equal(env.TRUST_PROXY, 2)
  t.equal(loadServiceEnv({ TRUST_PROXY: '10.0.0.0/8,127.0.0.1' }, false).TRUST_PROXY, '10.0.0.0/8,127.0.0.1')
  t.throws(() => loadServiceEnv({ PORT: 'eighty' }, false), { code: 'KERNEL_INVALID_ENV', message: /PORT/ })
  t.throws(() => loadServiceEnv({ PORT: '70000' }, false), { message: /PORT/ })
  t.throws(() => loadServiceEnv({ APP_ENV: 'staging' }, false), { message: /APP_ENV/ })
  t.throws(() => loadServiceEnv({ APP_DEBUG: 'maybe' }, false), { message: /APP_DEBUG/ })
})

t.test('debug in prod is refused unless forced, with the reason', async (t) => {
  t.throws(() => loadServiceEnv({ APP_ENV: 'prod', APP_DEBUG: 'true' }, false), { message: /refusing to start with APP_DEBUG=true in APP_ENV=prod: debug mode shows stack traces/ })
  t.equal(loadServiceEnv({ APP_ENV: 'prod', APP_DEBUG: 'true', APP_FORCE_DEBUG: 'true' }, false).APP_DEBUG, true)
})

t.test('the example service answers its home page and the exact routing errors', async (t) => {
  const app = await buildService(loadServiceEnv({ APP_ENV: 'test', APP_DEBUG: 'true', PROFILER_STORAGE: 'memory' }, false), { logger: false })
  t.teardown(() => app.close())
  const home = await app.inject({ url: '/', headers: { host: 'localhost:8000' } })
  t.equal(home.statusCode, 200)
  t.match(home.body, 'fastify-kernel is running')
  const robots = await app.inject({ url: '/robots.txt', headers: { host: 'localhost:8000', accept: 'application/json' } })
  t.equal(robots.json().detail, 'No route found for "GET http://localhost:8000/robots.txt"')
  const put = await app.inject({ method: 'PUT', url: '/form', headers: { host: 'localhost:8000' } })
  t.equal(put.headers.allow, 'GET, POST')
  t.equal((await app.inject({ url: '/fr/contact' })).json().locale, 'fr')
  t.equal((await app.inject({ url: '/items/abc' })).statusCode, 404)
  t.equal((await app.inject({ url: '/blog' })).statusCode, 301)
})
