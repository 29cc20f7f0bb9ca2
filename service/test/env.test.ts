import t from 'tap'
import { loadServiceEnv } from '../src/env.js'
import { buildService } from '../src/build-service.js'

/** prod requires a session secret */
const SECRET = 'a-prod-session-secret-of-40-characters!!'

t.test('defaults: dev, debug on, 127.0.0.1:8000', async (t) => {
  const env = loadServiceEnv({}, false)
  t.same(env, {
    APP_ENV: 'dev',
    APP_DEBUG: true,
    APP_FORCE_DEBUG: false,
    HOST: '127.0.0.1',
    PORT: 8000,
    TRUST_PROXY: false,
    APP_TRUSTED_HOSTS: [],
    LOG_LEVEL: 'info',
    APP_IDE: null,
    APP_SESSION_SECRET: null,
    APP_LOCALES: ['en', 'fr'],
    APP_DEFAULT_LOCALE: 'en',
    APP_USERS: null,
    APP_API_TOKENS: null,
    LOGIN_MAX_ATTEMPTS: 5,
    LOGIN_INTERVAL: 60,
    REDIS_URL: null,
    DATABASE_URL: null,
    SESSION_STORE: 'memory',
    PROFILER_STORAGE: 'file',
    PROFILER_DIR: null,
    PROFILER_MAX_PROFILES: 2000,
    PROFILER_MAX_AGE: 172800,
    PROFILER_ALLOWED_NETWORKS: [],
    PROFILER_ALLOWED_HOSTS: [],
    PROFILER_CAPTURE: 'all'
  })
  t.equal(loadServiceEnv({ APP_ENV: 'prod', APP_SESSION_SECRET: SECRET }, false).APP_DEBUG, false, 'debug is off by default outside dev')
})

t.test('REDIS_URL puts sessions and profiles on Redis unless SESSION_STORE / PROFILER_STORAGE say otherwise', async (t) => {
  const url = 'redis://:pw@cache:6379/2'
  const withRedis = loadServiceEnv({ REDIS_URL: url }, false)
  t.same([withRedis.REDIS_URL, withRedis.SESSION_STORE, withRedis.PROFILER_STORAGE], [url, 'redis', 'redis'])
  const mixed = loadServiceEnv({ REDIS_URL: url, SESSION_STORE: 'memory', PROFILER_STORAGE: 'file' }, false)
  t.same([mixed.SESSION_STORE, mixed.PROFILER_STORAGE], ['memory', 'file'])
  t.throws(() => loadServiceEnv({ SESSION_STORE: 'redis' }, false), { code: 'SERVICE_INVALID_ENV', message: /SESSION_STORE=redis needs REDIS_URL/ })
  t.throws(() => loadServiceEnv({ PROFILER_STORAGE: 'redis' }, false), { message: /PROFILER_STORAGE=redis needs REDIS_URL/ })
  t.throws(() => loadServiceEnv({ REDIS_URL: 'localhost:6379' }, false), { message: /REDIS_URL must be a redis:\/\// })
  t.throws(() => loadServiceEnv({ SESSION_STORE: 'postgres' }, false), { message: /SESSION_STORE/ })
})

t.test('values are coerced and validated with a clear message', async (t) => {
  const env = loadServiceEnv({ PORT: '8080', APP_DEBUG: 'false', TRUST_PROXY: '2', LOG_LEVEL: 'warn' }, false)
  t.equal(env.PORT, 8080)
  t.equal(env.APP_DEBUG, false)
  t.equal(env.TRUST_PROXY, 2)
  t.equal(loadServiceEnv({ TRUST_PROXY: '10.0.0.0/8,127.0.0.1' }, false).TRUST_PROXY, '10.0.0.0/8,127.0.0.1')
  t.throws(() => loadServiceEnv({ PORT: 'eighty' }, false), { code: 'SERVICE_INVALID_ENV', message: /PORT/ })
  t.throws(() => loadServiceEnv({ PORT: '70000' }, false), { message: /PORT/ })
  t.throws(() => loadServiceEnv({ APP_DEBUG: 'maybe' }, false), { message: 'APP_DEBUG must be one of 1/0, true/false, on/off, yes/no (got "maybe")' })
})

t.test('every enum error names the allowed values', async (t) => {
  t.throws(() => loadServiceEnv({ APP_ENV: 'production' }, false), { message: /APP_ENV must be one of dev, prod, test/ })
  t.throws(() => loadServiceEnv({ LOG_LEVEL: 'verbose' }, false), { message: /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/ })
  t.throws(() => loadServiceEnv({ PROFILER_STORAGE: 'disk' }, false), { message: /PROFILER_STORAGE must be one of file, memory/ })
  // several at once, each named
  t.throws(() => loadServiceEnv({ APP_ENV: 'production', LOG_LEVEL: 'verbose' }, false), { message: /APP_ENV must be one of dev, prod, test; LOG_LEVEL must be one of/ })
})

t.test("APP_DEBUG and APP_FORCE_DEBUG take Symfony's spellings, any case", async (t) => {
  for (const on of ['1', 'true', 'TRUE', 'on', 'On', 'yes', 'YES']) t.equal(loadServiceEnv({ APP_ENV: 'prod', APP_SESSION_SECRET: SECRET, APP_DEBUG: on, APP_FORCE_DEBUG: on }, false).APP_DEBUG, true, on)
  for (const off of ['0', 'false', 'False', 'off', 'no', 'NO', '']) t.equal(loadServiceEnv({ APP_DEBUG: off }, false).APP_DEBUG, false, JSON.stringify(off))
  t.throws(() => loadServiceEnv({ APP_ENV: 'prod', APP_SESSION_SECRET: SECRET, APP_DEBUG: '1' }, false), { message: /refusing to start with APP_DEBUG on in APP_ENV=prod/ }, 'APP_DEBUG=1 is debug: refused in prod')
})

t.test('TRUST_PROXY: a hop count trusts that many proxies (Fastify alone ignores a number)', async (t) => {
  t.equal(loadServiceEnv({ TRUST_PROXY: '0' }, false).TRUST_PROXY, false)
  t.equal(loadServiceEnv({ TRUST_PROXY: 'yes' }, false).TRUST_PROXY, true)
  const headers = { host: 'localhost:8000', 'x-forwarded-for': '203.0.113.9, 10.0.0.5', 'x-forwarded-proto': 'https', accept: 'application/json' }
  for (const [value, ip, proto] of [['1', '10.0.0.5', 'https'], ['2', '203.0.113.9', 'https'], ['false', '127.0.0.1', 'http'], ['127.0.0.1', '10.0.0.5', 'https'], ['10.0.0.0/8', '127.0.0.1', 'http']] as const) {
    const app = await buildService(loadServiceEnv({ APP_ENV: 'test', APP_DEBUG: '0', TRUST_PROXY: value }, false), { logger: false })
    app.get('/whoami', async (request) => ({ ip: request.ip, protocol: request.protocol }))
    const res = await app.inject({ url: '/whoami', headers, remoteAddress: '127.0.0.1' })
    t.same(res.json(), { ip, protocol: proto }, `TRUST_PROXY=${value}`)
    // the absolute URLs of the kernel follow the trusted scheme
    const miss = await app.inject({ url: '/nope', headers, remoteAddress: '127.0.0.1' })
    t.equal(miss.json().detail, 'Not Found')
    await app.close()
  }
})

t.test('APP_TRUSTED_HOSTS: one pattern, Symfony\'s trusted_hosts; an untrusted Host gets 400', async (t) => {
  t.throws(() => loadServiceEnv({ APP_TRUSTED_HOSTS: '^(unclosed' }, false), { code: 'SERVICE_INVALID_ENV', message: /APP_TRUSTED_HOSTS is not a regular expression: "\^\(unclosed"/ })
  const env = loadServiceEnv({ APP_ENV: 'test', APP_DEBUG: '0', APP_TRUSTED_HOSTS: '^(localhost|example\\.com)$' }, false)
  t.same(env.APP_TRUSTED_HOSTS, ['^(localhost|example\\.com)$'])
  const app = await buildService(env, { logger: false })
  t.teardown(() => app.close())
  const evil = await app.inject({ url: '/admin', headers: { host: 'evil.example', accept: 'application/json' } })
  t.equal(evil.statusCode, 400, 'not the 401 whose login redirect would name the host')
  t.equal(evil.json().detail, 'Bad Request')
  const trusted = await app.inject({ url: '/blog', headers: { host: 'EXAMPLE.com:8000' } })
  t.equal(trusted.statusCode, 301)
  t.equal(trusted.headers.location, 'http://example.com:8000/blog/')
})

t.test('debug in prod is refused unless forced, with the reason', async (t) => {
  t.throws(() => loadServiceEnv({ APP_ENV: 'prod', APP_DEBUG: 'true' }, false), { message: /refusing to start with APP_DEBUG on in APP_ENV=prod: debug mode shows stack traces/ })
  t.equal(loadServiceEnv({ APP_ENV: 'prod', APP_DEBUG: 'true', APP_FORCE_DEBUG: 'true', APP_SESSION_SECRET: SECRET }, false).APP_DEBUG, true)
})

t.test('session secret: generated in dev and test, required in prod, never too short', async (t) => {
  t.equal(loadServiceEnv({ APP_ENV: 'test' }, false).APP_SESSION_SECRET, null)
  t.throws(() => loadServiceEnv({ APP_ENV: 'prod' }, false), { code: 'SERVICE_INVALID_ENV', message: /APP_SESSION_SECRET is required with APP_ENV=prod \(at least 32/ })
  t.throws(() => loadServiceEnv({ APP_ENV: 'prod', APP_SESSION_SECRET: 'short' }, false), { message: /APP_SESSION_SECRET is too short: 5 characters, at least 32/ })
  t.throws(() => loadServiceEnv({ APP_SESSION_SECRET: 'short' }, false), { message: /too short/, }, 'refused in dev too')
  t.equal(loadServiceEnv({ APP_ENV: 'prod', APP_SESSION_SECRET: 's'.repeat(32) }, false).APP_SESSION_SECRET, 's'.repeat(32))
})

t.test('locales, users and API tokens from the environment', async (t) => {
  const hash = '$scrypt$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g'
  const env = loadServiceEnv({ APP_LOCALES: 'de, en ,pt_BR', APP_USERS: `ann:${hash}:ROLE_ADMIN|ROLE_X; bob:${hash}`, APP_API_TOKENS: `ann:${'a'.repeat(64)}` }, false)
  t.same(env.APP_LOCALES, ['de', 'en', 'pt_BR'])
  t.equal(env.APP_DEFAULT_LOCALE, 'de')
  t.same(env.APP_USERS, [{ username: 'ann', password: hash, roles: ['ROLE_ADMIN', 'ROLE_X'] }, { username: 'bob', password: hash, roles: [] }])
  t.same(env.APP_API_TOKENS, { ann: 'a'.repeat(64) })
  t.throws(() => loadServiceEnv({ APP_LOCALES: 'en', APP_DEFAULT_LOCALE: 'fr' }, false), { message: /APP_DEFAULT_LOCALE "fr" is not one of APP_LOCALES \(en\)/ })
  t.throws(() => loadServiceEnv({ APP_LOCALES: 'en,not a locale' }, false), { message: /APP_LOCALES/ })
  t.throws(() => loadServiceEnv({ APP_USERS: 'ann:plain-password:ROLE_ADMIN' }, false), { message: /APP_USERS user "ann": password not a scrypt password hash/ })
  t.throws(() => loadServiceEnv({ APP_USERS: 'ann' }, false), { message: /APP_USERS entry 1/ })
  t.throws(() => loadServiceEnv({ APP_API_TOKENS: 'ann:abc' }, false), { message: /APP_API_TOKENS/ })
  t.equal(loadServiceEnv({ LOGIN_MAX_ATTEMPTS: '0', LOGIN_INTERVAL: '300' }, false).LOGIN_MAX_ATTEMPTS, 0)
  t.throws(() => loadServiceEnv({ LOGIN_MAX_ATTEMPTS: '-1', LOGIN_INTERVAL: '0' }, false), { message: /LOGIN_MAX_ATTEMPTS must be >= 0; LOGIN_INTERVAL must be >= 1/ })
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

t.test('APP_IDE turns file references of debug pages into editor links', async (t) => {
  t.equal(loadServiceEnv({ APP_IDE: ' vscode ' }, false).APP_IDE, 'vscode')
  const app = await buildService(loadServiceEnv({ APP_ENV: 'test', APP_DEBUG: 'true', APP_IDE: 'phpstorm', PROFILER_STORAGE: 'memory' }, false), { logger: false })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/boom', headers: { accept: 'text/html' } })
  t.equal(res.statusCode, 500)
  t.match(res.body, /<a class="file" href="phpstorm:\/\/open\?file&#x3D;\/[^"]+example-app\.ts&amp;line&#x3D;\d+">service\/src\/example-app\.ts<\/a>/, 'the example app\'s file, linked')
  const plain = await buildService(loadServiceEnv({ APP_ENV: 'test', APP_DEBUG: 'true', PROFILER_STORAGE: 'memory' }, false), { logger: false })
  t.teardown(() => plain.close())
  t.notMatch((await plain.inject({ url: '/boom', headers: { accept: 'text/html' } })).body, 'class="file" href=', 'unset: no links')
})

t.test('the service closes a socket silent for two minutes (connectionTimeout)', async (t) => {
  const app = await buildService(loadServiceEnv({ APP_ENV: 'test', APP_DEBUG: '0' }, false), { logger: false })
  t.teardown(() => app.close())
  t.equal(app.server.timeout, 120_000)
})
