import t from 'tap'
import { securedApp, call, basic, passwords, tokens } from './app.js'
import type { SecurityCollected } from '../../src/security/index.js'

t.test('kernel.request runs session < locale default < router < locale from route < firewall', async (t) => {
  // the profiler's token listener (first of all) is not what this test is about
  const app = await securedApp({ profiler: false })
  t.teardown(() => app.close())
  const { res, context } = await call(app, { url: '/fr/page' })
  t.equal(res.statusCode, 200)
  const requestListeners = context.trace.filter((e) => e.stage === 'kernel.request' && e.listener !== undefined).map((e) => `${e.listener}:${e.priority}`)
  t.same(requestListeners, ['session:128', 'locale default:100', 'router:32', 'locale from route:16', 'firewall:8'])
})

t.test('an unmatched path fails at the router: the firewall never runs', async (t) => {
  const app = await securedApp({ profiler: false })
  t.teardown(() => app.close())
  const { res, context, collected } = await call(app, { url: '/admin/nope', headers: { accept: 'application/json' } })
  t.equal(res.statusCode, 404, 'a 404, not a 401, even under ^/admin')
  t.equal(res.json().detail, 'No route found for "GET http://example.test/admin/nope"')
  const listeners = context.trace.filter((e) => e.stage === 'kernel.request' && e.listener !== undefined).map((e) => e.listener)
  t.same(listeners, ['session', 'locale default', 'router'])
  // the profiler's security panel exists on every profile, as Symfony's: the anonymous state
  t.match(collected.security, { firewall: null, authenticated: false, user: null, roles: [] })
})

t.test('a routing miss\'s profile opens the security panel (Symfony\'s name): no firewall, anonymous', async (t) => {
  const app = await securedApp()
  t.teardown(() => app.close())
  const miss = await call(app, { url: '/admin/nope' })
  const token = String(miss.res.headers['x-debug-token'])
  t.match(token, /^[0-9a-f]{6}$/)
  await app.kernelProfiler!.settled()
  const panel = await app.inject({ url: `/_profiler/${token}?panel=security`, headers: { host: 'example.test' } })
  t.equal(panel.statusCode, 200)
  t.match(panel.body, '<main id="panel" data-panel="security">')
  t.match(panel.body, '(anonymous)')
})

t.test('production collects nothing for a miss: no profiler reads it', async (t) => {
  const app = await securedApp({ debug: false, profiler: false })
  t.teardown(() => app.close())
  const { res, context } = await call(app, { url: '/admin/nope', headers: { accept: 'application/json' } })
  t.equal(res.statusCode, 404)
  t.equal(context.get('security'), undefined, 'the firewall never ran: no security state')
  t.equal(app.kernelProfiler.enabled, false, 'and no profiler runs the collectors')
})

t.test('/admin: anonymous 401 with the realm and an empty body, still through kernel.response', async (t) => {
  const app = await securedApp()
  t.teardown(() => app.close())
  const { res, context, collected } = await call(app, { url: '/admin' })
  t.equal(res.statusCode, 401)
  t.equal(res.headers['www-authenticate'], 'Basic realm="Secured Area"')
  t.equal(res.body, '')
  t.equal(res.headers['x-robots-tag'], 'noindex', 'kernel.response ran')
  t.equal(res.headers['x-debug-exception'], undefined, 'no error page')
  t.equal(res.headers['set-cookie'], undefined, 'no session for an anonymous visitor')
  const stages = context.trace.filter((e) => e.listener === undefined).map((e) => e.stage)
  t.same(stages, ['kernel.request', 'kernel.exception', 'kernel.response', 'kernel.finish_request', 'kernel.terminate'])
  t.same(collected.security, {
    firewall: 'main',
    stateless: false,
    authenticated: false,
    user: null,
    roles: [],
    authenticator: null,
    accessRule: { path: '^/admin', roles: ['ROLE_ADMIN'] },
    decision: 'unauthenticated',
    reason: 'access rule "^/admin" requires ROLE_ADMIN'
  } satisfies SecurityCollected)
  const head = await call(app, { method: 'HEAD', url: '/admin' })
  t.equal(head.res.statusCode, 401)
  t.equal(head.res.headers['www-authenticate'], 'Basic realm="Secured Area"')
})

t.test('/admin: wrong credentials get the same 401, even on a public path', async (t) => {
  const app = await securedApp()
  t.teardown(() => app.close())
  for (const authorization of [basic('admin', 'wrong'), basic('nobody', 'x'), basic('user', passwords.admin)]) {
    const { res, collected } = await call(app, { url: '/admin', headers: { authorization } })
    t.equal(res.statusCode, 401, authorization)
    t.equal(res.headers['www-authenticate'], 'Basic realm="Secured Area"')
    t.equal(res.body, '')
    t.equal(res.headers['set-cookie'], undefined, 'no session for a failed login')
    t.equal((collected.security as SecurityCollected).reason, 'Invalid credentials.')
  }
  const pub = await call(app, { url: '/', headers: { authorization: basic('admin', 'wrong') } })
  t.equal(pub.res.statusCode, 401, 'Symfony: a failing authenticator answers wherever the path')
})

t.test('/admin: a plain user gets 403 Access Denied. through the error controller (debug page)', async (t) => {
  const app = await securedApp()
  t.teardown(() => app.close())
  const { res, collected } = await call(app, { url: '/admin', headers: { authorization: basic('user', passwords.user) } })
  t.equal(res.statusCode, 403)
  t.match(res.headers['content-type'], 'text/html')
  t.match(res.body, '<title>Access Denied. (403 Forbidden)</title>')
  t.match(res.body, 'AccessDeniedHttpException')
  t.match(res.body, 'AccessDeniedException', 'the security exception is the cause')
  t.equal(res.headers['x-debug-exception'], 'Access%20Denied.')
  t.equal(res.headers['www-authenticate'], undefined)
  t.equal(res.headers['x-robots-tag'], 'noindex')
  t.same(collected.security, {
    firewall: 'main',
    stateless: false,
    authenticated: true,
    user: 'user',
    roles: ['ROLE_USER'],
    authenticator: 'httpBasic',
    accessRule: { path: '^/admin', roles: ['ROLE_ADMIN'] },
    decision: 'denied',
    reason: 'access rule "^/admin" requires ROLE_ADMIN'
  })
  const json = await call(app, { url: '/admin', headers: { authorization: basic('user', passwords.user), accept: 'application/json' } })
  t.equal(json.res.json().detail, 'Access Denied.')
  t.equal(json.res.json().class, 'fastify-kernel/AccessDeniedHttpException')
})

t.test('/admin in production: 403 short page or problem JSON, nothing internal', async (t) => {
  const app = await securedApp({ debug: false })
  t.teardown(() => app.close())
  const html = await call(app, { url: '/admin', headers: { authorization: basic('user', passwords.user) } })
  t.equal(html.res.statusCode, 403)
  t.match(html.res.body, 'The server returned a "403 Forbidden".')
  t.notMatch(html.res.body, 'AccessDenied')
  t.equal(html.res.headers['x-debug-exception'], undefined)
  const json = await call(app, { url: '/admin', headers: { authorization: basic('user', passwords.user), accept: 'application/json' } })
  t.same(json.res.json(), { type: 'https://tools.ietf.org/html/rfc2616#section-10', title: 'An error occurred', status: 403, detail: 'Forbidden' })
  const anon = await call(app, { url: '/admin' })
  t.equal(anon.res.statusCode, 401)
  t.equal(anon.res.body, '')
  t.equal(anon.res.headers['x-robots-tag'], undefined, 'no robots header outside debug')
})

t.test('/admin: 200 for an admin; the role hierarchy gives admins ROLE_USER', async (t) => {
  const app = await securedApp()
  t.teardown(() => app.close())
  const { res, collected } = await call(app, { url: '/admin', headers: { authorization: basic('admin', passwords.admin) } })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { admin: 'admin' })
  t.equal(res.headers['set-cookie'], undefined, 'HTTP Basic keeps nothing in the session')
  const security = collected.security as SecurityCollected
  t.same(security.roles, ['ROLE_ADMIN', 'ROLE_USER'])
  t.equal(security.decision, 'granted')
  const profile = await call(app, { url: '/profile', headers: { authorization: basic('admin', passwords.admin) } })
  t.equal(profile.res.statusCode, 200, 'ROLE_ADMIN includes ROLE_USER')
  t.same(profile.res.json(), { user: 'admin' })
  const asUser = await call(app, { url: '/profile', headers: { authorization: basic('user', passwords.user) } })
  t.equal(asUser.res.statusCode, 200)
  const anon = await call(app, { url: '/' })
  t.equal(anon.res.statusCode, 200, 'no access rule: anonymous is fine')
  t.equal((anon.collected.security as SecurityCollected).decision, 'none')
})

t.test('Bearer on a stateless firewall', async (t) => {
  const app = await securedApp()
  t.teardown(() => app.close())
  const anon = await call(app, { url: '/api/me' })
  t.equal(anon.res.statusCode, 401)
  t.equal(anon.res.headers['www-authenticate'], 'Bearer realm="API"')
  t.equal(anon.res.body, '')
  const ok = await call(app, { url: '/api/me', headers: { authorization: `Bearer ${tokens.admin}` } })
  t.equal(ok.res.statusCode, 200)
  t.same(ok.res.json(), { user: 'admin' })
  t.equal((ok.collected.security as SecurityCollected).stateless, true)
  t.equal((ok.collected.security as SecurityCollected).authenticator, 'bearer')
  const bad = await call(app, { url: '/api/me', headers: { authorization: 'Bearer not-the-token' } })
  t.equal(bad.res.statusCode, 401)
  t.equal(bad.res.headers['www-authenticate'], 'Bearer realm="API", error="invalid_token", error_description="Invalid credentials."')
  t.equal(bad.res.body, '')
  const basicOnApi = await call(app, { url: '/api/me', headers: { authorization: basic('admin', passwords.admin) } })
  t.equal(basicOnApi.res.statusCode, 401, 'the api firewall has no HTTP Basic: anonymous')
  t.equal(basicOnApi.res.headers['www-authenticate'], 'Bearer realm="API"')
})

t.test('bad Authorization headers: 401, never 500', async (t) => {
  const app = await securedApp()
  t.teardown(() => app.close())
  const cases: Array<[string, string]> = [
    ['bad base64', 'Basic !!!not-base64!!!'],
    ['base64 without a colon', 'Basic ' + Buffer.from('adminadmin').toString('base64')],
    ['empty', 'Basic '],
    ['scheme only', 'Basic'],
    ['empty username', basic('', 'x')],
    ['huge value', 'Basic ' + 'A'.repeat(100_000)],
    ['huge password', basic('admin', 'x'.repeat(20_000))],
    ['unknown scheme', 'Digest username="admin"'],
    ['lower-case scheme, wrong password', 'basic ' + Buffer.from('admin:nope').toString('base64')],
    ['binary garbage', 'Basic ' + Buffer.from([0xff, 0xfe, 0x3a, 0x00]).toString('base64')],
    ['bearer with spaces', 'Bearer a b c']
  ]
  for (const [name, authorization] of cases) {
    const { res } = await call(app, { url: '/admin', headers: { authorization } })
    t.equal(res.statusCode, 401, name)
    t.equal(res.headers['www-authenticate'], 'Basic realm="Secured Area"', name)
    t.equal(res.body, '', name)
    t.equal(res.headers['set-cookie'], undefined, name)
  }
  const bearer = await call(app, { url: '/api/me', headers: { authorization: 'Bearer ' + 'x'.repeat(50_000) } })
  t.equal(bearer.res.statusCode, 401)
  const upper = await call(app, { url: '/admin', headers: { authorization: 'BASIC ' + Buffer.from(`admin:${passwords.admin}`).toString('base64') } })
  t.equal(upper.res.statusCode, 200, 'the scheme is case-insensitive')
})

t.test('access rules match the decoded path: /%61dmin is /admin', async (t) => {
  const app = await securedApp()
  t.teardown(() => app.close())
  const { res } = await call(app, { url: '/%61dmin' })
  t.equal(res.statusCode, 401)
})

t.test('requests Fastify rejects before routing still get their 404 with every service on', async (t) => {
  const app = await securedApp()
  t.teardown(() => app.close())
  for (const url of ['/bad%zz', '/admin/%E0%A4%A', '/' + 'x'.repeat(70_000)]) {
    const res = await app.inject({ url, headers: { host: 'example.test', cookie: 'sessionId=forged', authorization: 'Basic !!!' } })
    t.equal(res.statusCode, 404, url.slice(0, 20))
  }
})

t.test('a trailing-slash redirect is a route match, as in Symfony: the firewall still runs on it', async (t) => {
  const app = await securedApp()
  t.teardown(() => app.close())
  const anonymous = await call(app, { url: '/admin/' })
  t.equal(anonymous.res.statusCode, 401, 'anonymous: the firewall answers before any redirect')
  t.equal(anonymous.res.headers['www-authenticate'], 'Basic realm="Secured Area"')
  const admin = await call(app, { url: '/admin/?x=1', headers: { authorization: basic('admin', passwords.admin) } })
  t.equal(admin.res.statusCode, 301, 'granted: the redirect')
  t.equal(admin.res.headers.location, 'http://example.test/admin?x=1')
  t.equal(admin.context.attributes._route, 'admin')
  const localized = await call(app, { url: '/fr/page/' })
  t.equal(localized.res.statusCode, 301)
  t.equal(localized.context.attributes._locale, 'fr', 'the locale comes from the target route')
})
