import t from 'tap'
import type { Test } from 'tap'
import { Redis } from 'ioredis'
import { securedApp, call, csrfToken, login, passwords, sessionCookie, SECRET, formLoginSecurity } from '../security/app.js'
import { TestRedis } from '../redis/server.js'
import { connectRedis, IdleExpiryRedisStore } from '../../service/src/redis.js'
import { MemorySessionStore } from '../../src/session/memory-store.js'

declare module 'fastify' {
  interface Session {
    _security_main?: unknown
  }
}

const PREFIX = 'fastify-kernel:session:'

function collectingLog (): { warn: (fields: object, message: string) => void, messages: string[] } {
  const messages: string[] = []
  return { warn: (_fields, message) => { messages.push(message) }, messages }
}

async function redisApp (t: Test, redis: TestRedis, ttl = 1800) {
  const client = await connectRedis(redis.url, collectingLog())
  t.teardown(() => { client.disconnect() })
  const app = await securedApp({ session: { secret: SECRET, ttl, store: new IdleExpiryRedisStore(client, ttl) } }, (app) => {
    app.get('/read', async (request) => ({ user: (request.session.get('_security_main') as { username?: string } | undefined)?.username ?? null }))
  })
  t.teardown(() => app.close())
  return app
}

/** Commands Redis executed since the last reset, without the test's own INFO and CONFIG. */
async function commandsSince (admin: Redis): Promise<Record<string, number>> {
  const info = await admin.info('commandstats')
  const out: Record<string, number> = {}
  for (const [, name, calls] of info.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)) {
    if (name !== 'info' && !name.startsWith('config')) out[name] = Number(calls)
  }
  return out
}

t.test('sessions on Redis: a login on one app instance works on another; logout and regenerate remove the old key', async (t) => {
  const redis = await TestRedis.start(t)
  const admin = redis.client(t)
  const one = await redisApp(t, redis)
  const two = await redisApp(t, redis)

  // an anonymous session first (a remembered target path), then the login regenerates it
  const anonymous = await call(one, { url: '/admin?tab=1', headers: { accept: 'text/html' } })
  t.equal(anonymous.res.statusCode, 401)
  const before = await call(one, { url: '/profile' })
  t.equal(before.res.statusCode, 401)
  const { res } = await login(one, 'admin', passwords.admin)
  const cookie = sessionCookie(res)!
  t.ok(cookie)
  const id = decodeURIComponent(cookie.split('=')[1]).split('.')[0]
  t.equal(await admin.exists(PREFIX + id), 1, 'the session is a Redis key')
  const ttl = await admin.ttl(PREFIX + id)
  t.ok(ttl > 1790 && ttl <= 1800, `its expiry is the session ttl (${ttl} s)`)

  const elsewhere = await call(two, { url: '/admin', headers: { cookie } })
  t.equal(elsewhere.res.statusCode, 200, 'the other instance knows the login')
  t.same(elsewhere.res.json(), { admin: 'admin' })

  // login again with that cookie: regenerate() removes the old key
  const again = await login(two, 'admin', passwords.admin, cookie)
  const renewed = sessionCookie(again.res)!
  t.not(renewed, cookie)
  t.equal(await admin.exists(PREFIX + id), 0, 'the pre-login key is gone')
  t.equal((await call(one, { url: '/admin', headers: { cookie } })).res.statusCode, 401)

  const renewedId = decodeURIComponent(renewed.split('=')[1]).split('.')[0]
  const out = await call(one, { method: 'POST', url: '/logout', headers: { cookie: renewed, 'x-csrf-token': await csrfToken(two, renewed) } })
  t.equal(out.res.statusCode, 302)
  t.equal(await admin.exists(PREFIX + renewedId), 0, 'logout removes the key')
  t.equal((await call(two, { url: '/admin', headers: { cookie: renewed } })).res.statusCode, 401)
})

t.test('sessions on Redis: idle expiry — a read renews the key\'s expiry in the same round trip; none for a request without a session', async (t) => {
  const redis = await TestRedis.start(t)
  const admin = redis.client(t)
  const app = await redisApp(t, redis, 600)
  const cookie = sessionCookie((await login(app, 'admin', passwords.admin)).res)!
  const id = decodeURIComponent(cookie.split('=')[1]).split('.')[0]
  await admin.expire(PREFIX + id, 5)

  await admin.config('RESETSTAT')
  const read = await call(app, { url: '/read', headers: { cookie } })
  t.same(read.res.json(), { user: 'admin' })
  t.same(await commandsSince(admin), { getex: 1 }, 'a request reading its session: one Redis command, GETEX')
  const ttl = await admin.ttl(PREFIX + id)
  t.ok(ttl > 590, `the read renewed the expiry (${ttl} s)`)

  await admin.config('RESETSTAT')
  for (const url of ['/', '/read', '/nope', '/fr/page']) t.not((await call(app, { url })).res.statusCode, 500, url)
  t.same(await commandsSince(admin), {}, 'requests without a session cookie: no Redis command at all')
})

t.test('sessions on Redis: a store that fails or is slow fails closed — anonymous, a warning, no 500, the cookie kept', async (t) => {
  const redis = await TestRedis.start(t)
  const admin = redis.client(t)
  const log = collectingLog()
  const client = await connectRedis(redis.url, log)
  t.teardown(() => { client.disconnect() })
  const app = await securedApp({ session: { secret: SECRET, store: new IdleExpiryRedisStore(client, 1800), storeTimeout: 200 } }, (app) => {
    app.get('/read', async (request) => ({ user: (request.session.get('_security_main') as { username?: string } | undefined)?.username ?? null }))
  })
  t.teardown(() => app.close())
  const warnings: string[] = []
  app.log.warn = ((fields: object, message: string) => { warnings.push(message) }) as typeof app.log.warn
  const cookie = sessionCookie((await login(app, 'admin', passwords.admin)).res)!

  // slow: Redis answers nothing for a second, beyond the 200 ms bound
  const sleeping = admin.call('DEBUG', 'SLEEP', '1')
  const slow = await call(app, { url: '/read', headers: { cookie } })
  t.equal(slow.res.statusCode, 200)
  t.same(slow.res.json(), { user: null }, 'anonymous while the session cannot be read')
  t.equal(slow.res.headers['set-cookie'], undefined, 'the cookie is not cleared')
  await sleeping
  t.equal((await call(app, { url: '/admin', headers: { cookie } })).res.statusCode, 200, 'the session works again once Redis answers')

  // down: a public page still answers, a protected one is the ordinary 401
  const token = await csrfToken(app, cookie)
  await redis.stop()
  const home = await call(app, { url: '/', headers: { cookie } })
  t.equal(home.res.statusCode, 200)
  t.equal(home.res.headers['set-cookie'], undefined)
  t.equal((await call(app, { url: '/admin', headers: { cookie } })).res.statusCode, 401)
  t.ok(warnings.some((m) => /session store could not be read/.test(m)), 'a warning is logged')
  const logout = await call(app, { method: 'POST', url: '/logout', headers: { cookie, 'x-csrf-token': token } })
  t.equal(logout.res.statusCode, 503, 'logout cannot be confirmed: 503, not a false "logged out" nor a 403 for a token that could not be checked')
})

t.test('session store flooding: 10,500 anonymous requests that each store a target path do not evict logged-in users', async (t) => {
  const store = new MemorySessionStore({ maxSessions: 10_000, isAuthenticated: (s) => Object.keys(s).some((k) => k.startsWith('_security_')) })
  const app = await securedApp({
    session: { secret: SECRET, store },
    security: await formLoginSecurity()
  })
  t.teardown(() => app.close())
  const loggedIn = sessionCookie((await login(app, 'admin', passwords.admin)).res)!
  for (let i = 0; i < 10_500; i++) {
    const res = await app.inject({ url: `/admin?flood=${i}`, headers: { host: 'example.test' } })
    if (res.statusCode !== 302 || sessionCookie(res) === null) { t.fail(`request ${i}: ${res.statusCode}`); break }
  }
  t.ok(store.size <= 10_000 + 1, `the store stays bounded (${store.size})`)
  t.equal((await app.inject({ url: '/admin', headers: { host: 'example.test', cookie: loggedIn } })).statusCode, 200, 'the logged-in user is still logged in')
})

t.test('the default store of the session option keeps logged-in users apart from anonymous sessions', async (t) => {
  const app = await securedApp({
    session: { secret: SECRET, maxSessions: 2, maxAnonymousSessions: 5 },
    security: await formLoginSecurity()
  })
  t.teardown(() => app.close())
  const loggedIn = sessionCookie((await login(app, 'admin', passwords.admin)).res)!
  for (let i = 0; i < 50; i++) await app.inject({ url: `/admin?flood=${i}`, headers: { host: 'example.test' } })
  t.equal((await app.inject({ url: '/admin', headers: { host: 'example.test', cookie: loggedIn } })).statusCode, 200)
})
