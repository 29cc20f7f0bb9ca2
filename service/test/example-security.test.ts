import t from 'tap'
import { loadServiceEnv } from '../src/env.js'
import { buildService } from '../src/build-service.js'
import { DEMO_API_TOKEN } from '../src/example-app.js'

const basic = (u: string, p: string) => 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64')

t.test('the example service: /admin 401 / 403 / 200, /fr/ French, session cookie only when used', async (t) => {
  const app = await buildService(loadServiceEnv({ APP_ENV: 'dev' }, false), { logger: false })
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

  for (const url of ['/', '/login', '/fr/contact', '/hello/x', '/robots.txt']) {
    t.equal((await app.inject({ url, headers })).headers['set-cookie'], undefined, `no cookie for ${url}`)
  }

  const form = await app.inject({ url: '/login', headers })
  t.match(form.body, '<form method="post" action="/login">')
  const login = await app.inject({ method: 'POST', url: '/login', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: '_username=admin&_password=admin' })
  t.equal(login.statusCode, 302)
  t.equal(login.headers.location, 'http://localhost:8000/admin')
  const cookie = String(login.headers['set-cookie']).split(';')[0]
  t.match(cookie, /^sessionId=/)
  t.equal((await app.inject({ url: '/admin', headers: { ...headers, cookie } })).statusCode, 200)
  const profile = await app.inject({ url: '/profile', headers: { ...headers, cookie } })
  t.same(profile.json(), { user: 'admin', roles: ['ROLE_ADMIN', 'ROLE_USER'], locale: 'en' })
  t.equal((await app.inject({ url: '/profile', headers })).statusCode, 401, 'isGranted on an anonymous request')
  const out = await app.inject({ url: '/logout', headers: { ...headers, cookie } })
  t.equal(out.statusCode, 302)
  t.equal((await app.inject({ url: '/admin', headers: { ...headers, cookie } })).statusCode, 401)

  const bad = await app.inject({ method: 'POST', url: '/login', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: '_username=admin&_password=nope' })
  t.equal(bad.headers.location, 'http://localhost:8000/login?error=1')
  t.equal(bad.headers['set-cookie'], undefined)
  t.match((await app.inject({ url: '/login?error=1', headers })).body, 'Invalid credentials.')

  t.equal((await app.inject({ url: '/api/me', headers })).headers['www-authenticate'], 'Bearer realm="fastify-kernel API"')
  t.same((await app.inject({ url: '/api/me', headers: { ...headers, authorization: `Bearer ${DEMO_API_TOKEN}` } })).json(), { user: 'admin', roles: ['ROLE_ADMIN', 'ROLE_USER'] })
})

t.test('prod: no demo users, no demo token', async (t) => {
  const app = await buildService(loadServiceEnv({ APP_ENV: 'prod', APP_SESSION_SECRET: 'x'.repeat(40) }, false), { logger: false })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/admin', headers: { authorization: basic('admin', 'admin') } })).statusCode, 401)
  t.equal((await app.inject({ url: '/api/me', headers: { authorization: `Bearer ${DEMO_API_TOKEN}` } })).statusCode, 401)
})
