import t from 'tap'
import { securedApp, call, login, loginForm, csrfToken, passwords, sessionCookie, ready, SECRET, formLoginSecurity } from '../security/app.js'
import { createKernelApp } from '../../index.js'
import { MemorySessionStore } from '../../src/session/memory-store.js'
import { ManualClock } from '../clock.js'
import type { SessionCollected } from '../../src/session/collector.js'

// what these tests keep in sessions, typed as an app declares its own (@fastify/session)
declare module 'fastify' {
  interface Session {
    visits?: number
    x?: unknown
    cart?: unknown
    _security_main?: unknown
    flash?: unknown
  }
}

t.test('lazy: a request that never writes to the session sets no cookie and stores nothing', async (t) => {
  const store = new MemorySessionStore()
  const app = await securedApp({ session: { secret: SECRET, store } }, (app) => {
    app.get('/read', async (request) => ({ seen: request.session.get('visits') ?? null }))
    app.get('/write', async (request) => { request.session.set('visits', 1); return 'written' })
  })
  t.teardown(() => app.close())
  for (const url of ['/', '/read', '/fr/page', '/nope']) {
    const { res, collected } = await call(app, { url })
    t.equal(res.headers['set-cookie'], undefined, url)
    if (url !== '/nope') {
      t.same(collected.session, { exists: false, isNew: false, regenerated: false, cookieSet: false, idPrefix: null, attributes: {}, flashes: {} } satisfies SessionCollected, url)
    }
  }
  t.equal(store.size, 0, 'nothing created in the store')

  const written = await call(app, { url: '/write' })
  const cookie = sessionCookie(written.res)
  t.ok(cookie, 'writing starts the session')
  t.equal(store.size, 1)
  const set = String(written.res.headers['set-cookie'])
  t.match(set, /; HttpOnly/)
  t.match(set, /; SameSite=Lax/)
  t.notMatch(set, /; Secure/, 'plain HTTP: no Secure flag')
  const collected = written.collected.session as SessionCollected
  t.equal(collected.exists, true)
  t.equal(collected.isNew, true)
  t.equal(collected.cookieSet, true)
  t.equal(collected.idPrefix?.length, 6, 'never the whole id')
  t.notOk(set.includes(collected.idPrefix!.repeat(2)))
  t.same(collected.attributes, { visits: 1 })

  const again = await call(app, { url: '/read', headers: { cookie: cookie! } })
  t.same(again.res.json(), { seen: 1 })
  t.equal(again.res.headers['set-cookie'], undefined, 'an unchanged session is not sent again')
  const collectedAgain = again.collected.session as SessionCollected
  t.equal(collectedAgain.exists, true)
  t.equal(collectedAgain.isNew, false)
  t.equal(collectedAgain.cookieSet, false)
  t.equal(collectedAgain.idPrefix, collected.idPrefix)

  const form = await call(app, { url: '/login' })
  t.ok(sessionCookie(form.res), 'a page that renders a CSRF token (the login form) starts a session, as in Symfony')
  t.same(Object.keys((form.collected.session as SessionCollected).attributes), ['_csrf'])
  t.equal(store.size, 2)
})

t.test('over HTTPS (behind a trusted proxy) the cookie is Secure', async (t) => {
  const app = await createKernelApp({ kernel: { session: { secret: SECRET } }, fastify: { logger: false, trustProxy: true } })
  app.get('/write', async (request) => { request.session.set('x', 1); return 'ok' })
  await ready(app)
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/write', headers: { 'x-forwarded-proto': 'https' } })
  t.match(String(res.headers['set-cookie']), /; Secure/)
  t.match(String(res.headers['set-cookie']), /; SameSite=Lax/)
})

t.test('login regenerates the session id (no fixation) and keeps the session\'s data', async (t) => {
  const store = new MemorySessionStore()
  const app = await securedApp({ session: { secret: SECRET, store } }, (app) => {
    app.get('/write', async (request) => { request.session.set('cart', ['book']); return 'ok' })
    app.get('/cart', async (request) => ({ cart: request.session.get('cart') ?? null }))
  })
  t.teardown(() => app.close())
  const before = sessionCookie((await call(app, { url: '/write' })).res)!
  const { res, collected: left } = await login(app, 'admin', passwords.admin, before)
  t.equal(res.statusCode, 302)
  t.equal(res.headers.location, '/')
  const after = sessionCookie(res)!
  t.ok(after)
  t.not(after, before, 'a new session id after login')
  const collected = left.session as SessionCollected
  t.equal(collected.regenerated, true)
  t.same(collected.attributes._security_main, { username: 'admin', authenticator: 'formLogin' })
  t.equal(store.size, 1, 'the old session is gone from the store')

  const admin = await call(app, { url: '/admin', headers: { cookie: after } })
  t.equal(admin.res.statusCode, 200, 'the session authenticates')
  t.same(admin.res.json(), { admin: 'admin' })
  t.equal((await call(app, { url: '/cart', headers: { cookie: after } })).res.json().cart[0], 'book', 'data moved to the new id')
  const old = await call(app, { url: '/admin', headers: { cookie: before } })
  t.equal(old.res.statusCode, 401, 'the pre-login id is worth nothing')
})

t.test('a failed login writes nothing to the session, redirects back to the form, and says nothing more', async (t) => {
  const store = new MemorySessionStore()
  const app = await securedApp({ session: { secret: SECRET, store } })
  t.teardown(() => app.close())
  // the form's session holds its CSRF secret and nothing else
  const { token, cookie } = await loginForm(app)
  t.equal(store.size, 1)
  for (const [username, password] of [['admin', 'wrong'], ['nobody', 'x'], ['admin', ''], ['a'.repeat(5000), 'x']]) {
    const { res, collected } = await call(app, {
      method: 'POST',
      url: '/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      payload: new URLSearchParams({ _username: username, _password: password, _csrf_token: token }).toString()
    })
    t.equal(res.statusCode, 302)
    t.equal(res.headers.location, '/login?error=1')
    // no session cookie (in debug, the redirect's own: the profiler's redirect link)
    t.same([res.headers['set-cookie'] ?? []].flat().filter((set) => !set.startsWith('kernel_redirect=')), [], 'no session cookie')
    t.same(Object.keys((collected.session as SessionCollected).attributes), ['_csrf'], 'no user, no other data')
  }
  const missing = await call(app, { method: 'POST', url: '/login', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie }, payload: `_username[]=admin&_csrf_token=${token}` })
  t.equal(missing.res.statusCode, 302)
  t.equal(store.size, 1, 'failed logins stored no session')
  const json = await call(app, { method: 'POST', url: '/login', headers: { 'content-type': 'application/json', cookie }, payload: JSON.stringify({ _username: 'admin', _password: 'admin-pass', _csrf_token: token }) })
  t.equal(json.res.statusCode, 302, 'JSON bodies are accepted by the app\'s own parser')
  t.equal(json.res.headers.location, '/')
  t.equal(store.size, 1, 'the form\'s session was replaced by the logged-in one')
})

t.test('forged, tampered and expired cookies get a fresh, lazy session', async (t) => {
  const clock = new ManualClock()
  const store = new MemorySessionStore({ ttlSeconds: 60, clock })
  const app = await securedApp({ session: { secret: SECRET, store } }, (app) => {
    app.get('/read', async (request) => ({ user: request.session.get('_security_main') ?? null }))
  })
  t.teardown(() => app.close())
  const good = sessionCookie((await login(app, 'admin', passwords.admin)).res)!
  const [name, value] = good.split('=')
  const forged = [
    `${name}=not-signed-at-all`,
    `${name}=${value.slice(0, -2)}xx`,
    `${name}=${'A'.repeat(32)}.${'B'.repeat(43)}`,
    `${name}=${'%'.repeat(300)}`,
    `${name}=${'z'.repeat(4000)}`
  ]
  for (const cookie of forged) {
    const { res, collected } = await call(app, { url: '/read', headers: { cookie } })
    t.equal(res.statusCode, 200, cookie.slice(0, 40))
    t.same(res.json(), { user: null })
    t.equal((collected.session as SessionCollected).exists, false)
    t.match(String(res.headers['set-cookie']), /^sessionId=; Max-Age=0/, 'the bad cookie is cleared')
    t.equal((await call(app, { url: '/admin', headers: { cookie } })).res.statusCode, 401)
  }
  t.equal(store.size, 1)
  t.equal((await call(app, { url: '/admin', headers: { cookie: good } })).res.statusCode, 200)
  clock.advance(60_000)
  t.equal((await call(app, { url: '/admin', headers: { cookie: good } })).res.statusCode, 200, 'used within the ttl: kept, and its idle time starts again')
  clock.advance(60_001)
  const expired = await call(app, { url: '/admin', headers: { cookie: good } })
  t.equal(expired.res.statusCode, 401, 'an idle session expires')
  t.equal(store.size, 0)
})

t.test('the store is bounded: the least recently used session goes first', async (t) => {
  const store = new MemorySessionStore({ maxSessions: 2 })
  const app = await securedApp({ session: { secret: SECRET, store } })
  t.teardown(() => app.close())
  const first = sessionCookie((await login(app, 'admin', passwords.admin)).res)!
  await login(app, 'user', passwords.user)
  await login(app, 'user', passwords.user)
  t.equal(store.size, 2)
  t.equal((await call(app, { url: '/admin', headers: { cookie: first } })).res.statusCode, 401, 'evicted')
})

t.test('flash messages live until read', async (t) => {
  const app = await securedApp({}, (app) => {
    app.post('/save', async (request, reply) => { request.flash('success', 'Saved.'); return reply.redirect('/done', 303) })
    app.get('/done', async (request, reply) => ({ messages: request.session.get('flash') === undefined ? {} : reply.flash() }))
  })
  t.teardown(() => app.close())
  const saved = await call(app, { method: 'POST', url: '/save' })
  const cookie = sessionCookie(saved.res)!
  t.same((saved.collected.session as SessionCollected).flashes, { success: ['Saved.'] })
  const done = await call(app, { url: '/done', headers: { cookie } })
  t.same(done.res.json(), { messages: { success: ['Saved.'] } })
  t.same((done.collected.session as SessionCollected).flashes, {})
  t.same((await call(app, { url: '/done', headers: { cookie } })).res.json(), { messages: {} }, 'read once')
})

t.test('logout destroys the session and clears the cookie', async (t) => {
  const store = new MemorySessionStore()
  const app = await securedApp({ session: { secret: SECRET, store } })
  t.teardown(() => app.close())
  const cookie = sessionCookie((await login(app, 'admin', passwords.admin)).res)!
  // Symfony's logout link: the token in the query
  const { res, collected } = await call(app, { url: `/logout?_csrf_token=${encodeURIComponent(await csrfToken(app, cookie))}`, headers: { cookie } })
  t.equal(res.statusCode, 302)
  t.equal(res.headers.location, '/')
  t.match(String(res.headers['set-cookie']), /^sessionId=; Max-Age=0/)
  t.equal(store.size, 0)
  t.equal((collected.session as SessionCollected).exists, false)
  t.equal((await call(app, { url: '/admin', headers: { cookie } })).res.statusCode, 401)
})

t.test('a protected page with a form-login entry point redirects to the form and returns there after login', async (t) => {
  const app = await securedApp({
    security: await formLoginSecurity()
  })
  t.teardown(() => app.close())
  const anon = await call(app, { url: '/admin?tab=2' })
  t.equal(anon.res.statusCode, 302)
  t.equal(anon.res.headers.location, '/login')
  const cookie = sessionCookie(anon.res)!
  t.ok(cookie, 'the target path is kept in the session')
  const { res } = await login(app, 'admin', passwords.admin, cookie)
  t.equal(res.headers.location, '/admin?tab=2')
})

t.test('session options are validated, naming each bad one', async (t) => {
  const build = (session: Record<string, unknown>) => createKernelApp({ kernel: { session: session as never }, fastify: { logger: false } })
  await t.rejects(build({ secret: 'short' }), { code: 'KERNEL_INVALID_OPTIONS', message: /"session\.secret" must be at least 32 characters/ })
  await t.rejects(build({}), { message: /"session\.secret" is required/ })
  await t.rejects(build({ secret: SECRET, cookie: { sameSite: 'sometimes' }, ttl: -1, colour: 'red' }), { message: /session\.cookie\.sameSite.*session\.ttl.*unknown option "session\.colour"|unknown option "session\.colour"/s })
  await t.rejects(build({ secret: SECRET, cookie: { sameSite: 'none' } }), { message: /needs "session\.cookie\.secure": true/ })
  await t.rejects(build({ secret: SECRET, store: { get () {} } }), { message: /session\.store/ })
})
