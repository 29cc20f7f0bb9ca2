import t from 'tap'
import { loadServiceEnv } from '../src/env.js'
import { buildService } from '../src/build-service.js'
import { DEMO_API_TOKEN } from '../src/example-app.js'

const basic = (u: string, p: string) => 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64')
type Service = Awaited<ReturnType<typeof buildService>>

/** GET /login as a browser: the page, its CSRF token and the session cookie it started. */
async function loginForm (app: Service, remoteAddress?: string): Promise<{ html: string, token: string, cookie: string }> {
  const res = await app.inject({ url: '/login', headers: { host: 'localhost:8000' }, ...(remoteAddress === undefined ? {} : { remoteAddress }) })
  const token = /name="_csrf_token" value="([^"]+)"/.exec(res.body)?.[1]
  const cookie = String(res.headers['set-cookie']).split(';')[0]
  if (token === undefined || !cookie.startsWith('sessionId=')) throw new Error('no token or no session on the login form')
  return { html: res.body, token, cookie }
}

/** Posts the login form as a browser would. */
function postLogin (app: Service, form: { token: string, cookie: string }, username: string, password: string, remoteAddress?: string) {
  return app.inject({
    method: 'POST',
    url: '/login',
    ...(remoteAddress === undefined ? {} : { remoteAddress }),
    headers: { host: 'localhost:8000', cookie: form.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _username: username, _password: password, _csrf_token: form.token }).toString()
  })
}

t.test('the example service: /admin 401 / 403 / 200, /fr/ French, session cookie only when used', async (t) => {
  const app = await buildService(loadServiceEnv({ APP_ENV: 'dev', PROFILER_STORAGE: 'memory' }, false), { logger: false })
  t.teardown(() => app.close())
  const headers = { host: 'localhost:8000' }

  const anon = await app.inject({ url: '/admin', headers })
  t.equal(anon.statusCode, 401)
  t.equal(anon.headers['www-authenticate'], 'Basic realm="fastify-kernel"')
  t.equal(anon.body, '')
  t.equal(anon.headers['set-cookie'], undefined)

  const user = await app.inject({ url: '/admin', headers: { ...headers, authorization: basic('user', 'user') } })
  t.equal(user.statusCode, 403)
  t.match(user.body, 'Access Denied.')

  const admin = await app.inject({ url: '/admin', headers: { ...headers, authorization: basic('admin', 'admin') } })
  t.equal(admin.statusCode, 200)
  t.match(admin.body, 'Hello admin (ROLE_ADMIN, ROLE_USER)')
  t.equal(admin.headers['set-cookie'], undefined, 'HTTP Basic uses no session')

  const fr = await app.inject({ url: '/fr/contact', headers })
  t.same(fr.json(), { locale: 'fr', message: 'Contactez-nous' })
  t.equal(fr.headers['content-language'], 'fr')
  t.equal((await app.inject({ url: '/de/contact', headers })).statusCode, 404)
  t.equal((await app.inject({ url: '/', headers: { ...headers, 'accept-language': 'fr-FR,fr;q=0.9' } })).headers['content-language'], 'fr')

  for (const url of ['/', '/fr/contact', '/hello/x', '/robots.txt']) {
    t.equal((await app.inject({ url, headers })).headers['set-cookie'], undefined, `no cookie for ${url}`)
  }

  const form = await loginForm(app)
  t.match(form.html, '<form method="post" action="/login">')
  t.match(form.html, /<input type="hidden" name="_csrf_token" value="[^"]+">/)
  const forged = await app.inject({ method: 'POST', url: '/login', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: '_username=admin&_password=admin' })
  t.equal(forged.statusCode, 403, 'a login without the form\'s token (a cross-site form) is refused')
  t.match(forged.body, 'Invalid CSRF token.')
  const login = await postLogin(app, form, 'admin', 'admin')
  t.equal(login.statusCode, 302)
  t.equal(login.headers.location, '/admin')
  const cookie = [login.headers['set-cookie'] ?? []].flat().find((set) => set.startsWith('sessionId='))?.split(';')[0] ?? ''
  t.match(cookie, /^sessionId=/)
  t.equal((await app.inject({ url: '/admin', headers: { ...headers, cookie } })).statusCode, 200)
  const profile = await app.inject({ url: '/profile', headers: { ...headers, cookie } })
  t.same(profile.json(), { user: 'admin', roles: ['ROLE_ADMIN', 'ROLE_USER'], locale: 'en' })
  t.equal((await app.inject({ url: '/profile', headers })).statusCode, 401, 'isGranted on an anonymous request')
  t.equal((await app.inject({ url: '/logout', headers: { ...headers, cookie } })).statusCode, 403, 'a logout link without a token (any site could embed it) is refused')
  const page = await app.inject({ url: '/admin', headers: { ...headers, cookie } })
  const button = /<form method="post" action="\/logout" class="inline"><input type="hidden" name="_csrf_token" value="([^"]+)"><button type="submit">Log out<\/button><\/form>/.exec(page.body)
  t.ok(button, 'the admin page has a logout button with the token')
  const out = await app.inject({ method: 'POST', url: '/logout', headers: { ...headers, cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: `_csrf_token=${encodeURIComponent(button![1])}` })
  t.equal(out.statusCode, 302)
  t.equal((await app.inject({ url: '/admin', headers: { ...headers, cookie } })).statusCode, 401)

  const retry = await loginForm(app)
  const bad = await postLogin(app, retry, 'admin', 'nope')
  t.equal(bad.headers.location, '/login?error=1')
  // no session cookie (in debug, the redirect's own: the profiler's redirect link)
  t.same([bad.headers['set-cookie'] ?? []].flat().filter((set) => !set.startsWith('kernel_redirect=')), [], 'no session cookie')
  t.match((await app.inject({ url: '/login?error=1', headers })).body, 'Invalid credentials.')

  t.equal((await app.inject({ url: '/api/me', headers })).headers['www-authenticate'], 'Bearer realm="fastify-kernel API"')
  t.same((await app.inject({ url: '/api/me', headers: { ...headers, authorization: `Bearer ${DEMO_API_TOKEN}` } })).json(), { user: 'admin', roles: ['ROLE_ADMIN', 'ROLE_USER'] })
})

t.test('login throttling: LOGIN_MAX_ATTEMPTS failures, then 429 with Retry-After; 0 turns it off', async (t) => {
  const app = await buildService(loadServiceEnv({ APP_ENV: 'dev', PROFILER_STORAGE: 'memory', LOGIN_MAX_ATTEMPTS: '2' }, false), { logger: false })
  t.teardown(() => app.close())
  const ip = '203.0.113.50'
  for (let i = 0; i < 2; i++) {
    const form = await loginForm(app, ip)
    t.equal((await postLogin(app, form, 'admin', `nope-${i}`, ip)).headers.location, '/login?error=1')
  }
  const throttled = await postLogin(app, await loginForm(app, ip), 'admin', 'admin', ip)
  t.equal(throttled.statusCode, 429)
  t.ok(Number(throttled.headers['retry-after']) >= 1)
  t.match(throttled.body, 'Too many failed login attempts, please try again in 1 minute.')
  const basicAuth = await app.inject({ url: '/admin', remoteAddress: ip, headers: { authorization: basic('admin', 'admin') } })
  t.equal(basicAuth.statusCode, 429, 'the same counters for HTTP Basic')
  t.equal((await app.inject({ url: '/admin', remoteAddress: '203.0.113.51', headers: { authorization: basic('admin', 'admin') } })).statusCode, 200, 'another client is not locked out')

  const off = await buildService(loadServiceEnv({ APP_ENV: 'dev', PROFILER_STORAGE: 'memory', LOGIN_MAX_ATTEMPTS: '0' }, false), { logger: false })
  t.teardown(() => off.close())
  for (let i = 0; i < 7; i++) t.equal((await off.inject({ url: '/admin', remoteAddress: ip, headers: { authorization: basic('admin', 'x') } })).statusCode, 401)
})

t.test('prod: no demo users, no demo token', async (t) => {
  const app = await buildService(loadServiceEnv({ APP_ENV: 'prod', APP_SESSION_SECRET: 'x'.repeat(40) }, false), { logger: false })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/admin', headers: { authorization: basic('admin', 'admin') } })).statusCode, 401)
  t.equal((await app.inject({ url: '/api/me', headers: { authorization: `Bearer ${DEMO_API_TOKEN}` } })).statusCode, 401)
})
