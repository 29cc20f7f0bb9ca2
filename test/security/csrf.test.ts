import t from 'tap'
import fastifyCsrfProtection from '@fastify/csrf-protection'
import Fastify from 'fastify'
import { securedApp, exampleSecurity, exampleUsers, call, login, loginForm, csrfToken, passwords, sessionCookie, SECRET } from './app.js'
import { kernel } from '../../index.js'
import type { SecurityCollected } from '../../src/security/index.js'

const form = 'application/x-www-form-urlencoded'

function postLogin (app: Parameters<typeof call>[0], cookie: string | undefined, fields: Record<string, string>, accept = 'text/html') {
  return call(app, { method: 'POST', url: '/login', headers: { 'content-type': form, accept, ...(cookie === undefined ? {} : { cookie }) }, payload: new URLSearchParams(fields).toString() })
}

t.test('a forged cross-site login (no session, or a token of another session) is refused with 403 before any password check', async (t) => {
  let checks = 0
  const users = await exampleUsers()
  const app = await securedApp({
    security: { ...(await exampleSecurity()), users: undefined, provider: { loadUser: (name) => { checks++; return users[name] === undefined ? null : { username: name, ...users[name], roles: users[name].roles ?? [] } } } }
  })
  t.teardown(() => app.close())
  const credentials = { _username: 'admin', _password: passwords.admin }

  const noSession = await postLogin(app, undefined, { ...credentials, _csrf_token: 'made-up' })
  t.equal(noSession.res.statusCode, 403, 'a cross-site POST carries no SameSite=Lax cookie: no secret, refused')
  t.match(noSession.res.body, '<title>Invalid CSRF token. (403 Forbidden)</title>')
  t.match(noSession.res.body, 'AccessDeniedHttpException')
  t.match(noSession.res.body, 'InvalidCsrfTokenException', 'Symfony\'s exception is the cause')
  t.equal(sessionCookie(noSession.res), null)

  const victim = await loginForm(app)
  const attacker = await loginForm(app)
  const crossed = await postLogin(app, victim.cookie, { ...credentials, _csrf_token: attacker.token })
  t.equal(crossed.res.statusCode, 403, 'a token of another session')
  const missing = await postLogin(app, victim.cookie, credentials, 'application/json')
  t.equal(missing.res.statusCode, 403)
  t.same({ ...missing.res.json(), trace: undefined }, { type: 'https://tools.ietf.org/html/rfc2616#section-10', title: 'An error occurred', status: 403, detail: 'Invalid CSRF token.', class: 'fastify-kernel/AccessDeniedHttpException', trace: undefined })
  t.equal(checks, 0, 'no password was checked for a forged login')

  const real = await postLogin(app, victim.cookie, { ...credentials, _csrf_token: victim.token })
  t.equal(real.res.statusCode, 302)
  t.equal(real.res.headers.location, '/')
  t.equal(checks, 1)
  const header = await call(app, { method: 'POST', url: '/login', headers: { 'content-type': form, cookie: attacker.cookie, 'x-csrf-token': attacker.token }, payload: new URLSearchParams(credentials).toString() })
  t.equal(header.res.statusCode, 302, 'JavaScript clients may send the token in X-CSRF-Token')
})

t.test('production: the short 403 page', async (t) => {
  const app = await securedApp({ debug: false })
  t.teardown(() => app.close())
  const { res } = await postLogin(app, undefined, { _username: 'admin', _password: passwords.admin })
  t.equal(res.statusCode, 403)
  t.match(res.body, 'The server returned a "403 Forbidden".')
  t.notMatch(res.body, 'CSRF')
})

t.test('logout needs the token: GET with it in the query (a link), POST in the body or a header; a forged logout leaves the session alone', async (t) => {
  const app = await securedApp()
  t.teardown(() => app.close())
  const session = async (): Promise<string> => sessionCookie((await login(app, 'admin', passwords.admin)).res)!

  const cookie = await session()
  for (const forged of [
    { url: '/logout' },
    { url: '/logout?_csrf_token=nope' },
    { method: 'POST' as const, url: '/logout', headers: { 'content-type': form }, payload: '_csrf_token=nope' },
    { method: 'POST' as const, url: '/logout?_csrf_token=nope', headers: { 'content-type': form }, payload: '' }
  ]) {
    const { res } = await call(app, { ...forged, headers: { ...forged.headers, cookie } })
    t.equal(res.statusCode, 403, `${forged.method ?? 'GET'} ${forged.url}`)
    t.match(res.body, 'Invalid CSRF token.')
  }
  t.equal((await call(app, { url: '/admin', headers: { cookie } })).res.statusCode, 200, 'still logged in')

  const link = await call(app, { url: `/logout?_csrf_token=${encodeURIComponent(await csrfToken(app, cookie))}`, headers: { cookie } })
  t.equal(link.res.statusCode, 302)
  t.equal((await call(app, { url: '/admin', headers: { cookie } })).res.statusCode, 401, 'logged out')

  const second = await session()
  const posted = await call(app, { method: 'POST', url: '/logout', headers: { 'content-type': form, cookie: second }, payload: `_csrf_token=${encodeURIComponent(await csrfToken(app, second))}` })
  t.equal(posted.res.statusCode, 302)
  t.equal((await call(app, { url: '/admin', headers: { cookie: second } })).res.statusCode, 401)

  const third = await session()
  const header = await call(app, { method: 'POST', url: '/logout', headers: { cookie: third, 'x-csrf-token': await csrfToken(app, third) } })
  t.equal(header.res.statusCode, 302)
})

t.test('logging in renews the CSRF secret: a token of the anonymous form is worth nothing afterwards', async (t) => {
  const app = await securedApp()
  t.teardown(() => app.close())
  const before = await loginForm(app)
  const { res, collected } = await postLogin(app, before.cookie, { _username: 'admin', _password: passwords.admin, _csrf_token: before.token })
  const after = sessionCookie(res)!
  t.notOk('_csrf' in (collected.session as { attributes: Record<string, unknown> }).attributes, 'the secret was not carried over')
  const stale = await call(app, { url: `/logout?_csrf_token=${encodeURIComponent(before.token)}`, headers: { cookie: after } })
  t.equal(stale.res.statusCode, 403)
  t.equal((stale.collected.security as SecurityCollected).user, 'admin')
})

t.test('csrf: false opts out (APIs, tests); csrfParameter renames the field', async (t) => {
  const off = await securedApp({ security: await exampleSecurity({}, {}).then((s) => ({ ...s, firewalls: s.firewalls.map((f) => f.name === 'main' ? { ...f, formLogin: { csrf: false }, logout: { csrf: false } } : f) })) })
  t.teardown(() => off.close())
  t.equal((await off.inject({ url: '/login' })).json().token, null, '@fastify/csrf-protection is not even registered')
  const { res } = await login(off, 'admin', passwords.admin, undefined, { csrf: false })
  t.equal(res.statusCode, 302)
  t.equal(res.headers.location, '/')
  const cookie = sessionCookie(res)!
  t.equal((await call(off, { url: '/logout', headers: { cookie } })).res.statusCode, 302, 'a plain logout link')

  const renamed = await securedApp({ security: await exampleSecurity({}, {}).then((s) => ({ ...s, firewalls: s.firewalls.map((f) => f.name === 'main' ? { ...f, formLogin: { csrfParameter: '_token' } } : f) })) })
  t.teardown(() => renamed.close())
  const page = await loginForm(renamed)
  t.equal((await postLogin(renamed, page.cookie, { _username: 'admin', _password: passwords.admin, _csrf_token: page.token })).res.statusCode, 403, 'the default name is not read')
  t.equal((await postLogin(renamed, page.cookie, { _username: 'admin', _password: passwords.admin, _token: page.token })).res.statusCode, 302)
})

t.test('the app\'s own forms use the same protection: app.csrfProtection and reply.generateCsrf()', async (t) => {
  const app = await securedApp({}, (app) => {
    app.get('/comment', async (_request, reply) => ({ token: reply.generateCsrf() }))
    app.post('/comment', { preHandler: app.csrfProtection }, async () => 'saved')
  })
  t.teardown(() => app.close())
  const page = await call(app, { url: '/comment' })
  const cookie = sessionCookie(page.res)!
  const token = page.res.json().token as string
  t.equal((await call(app, { method: 'POST', url: '/comment', headers: { 'content-type': 'application/json', cookie }, payload: { _csrf_token: 'forged' } })).res.statusCode, 403)
  const ok = await call(app, { method: 'POST', url: '/comment', headers: { 'content-type': 'application/json', cookie }, payload: { _csrf_token: token } })
  t.equal(ok.res.statusCode, 200)
  t.equal(ok.res.body, 'saved')
})

t.test('@fastify/csrf-protection registered by the app as well: a clear error', async (t) => {
  const app = Fastify({ logger: false })
  await app.register(await import('@fastify/cookie').then((m) => m.default))
  await app.register(fastifyCsrfProtection)
  const security = await exampleSecurity()
  await t.rejects(async () => { await app.register(kernel, { session: { secret: SECRET }, security }) }, {
    code: 'KERNEL_INVALID_OPTIONS',
    message: /@fastify\/csrf-protection is already registered/
  })
  await app.close()
})
