import t from 'tap'
import { call, csrfToken, formLoginSecurity, loginForm, passwords, securedApp, sessionCookie } from './app.js'

const EVIL = 'evil.example'

for (const debug of [true, false]) {
  t.test(`${debug ? 'dev' : 'prod'}, no trustedHosts: a forged Host never names the login redirects' target (entry point, check, logout)`, async (t) => {
    const app = await securedApp({ debug, security: await formLoginSecurity() })
    t.teardown(() => app.close())
    const host = { host: EVIL }

    const anonymous = await call(app, { url: '/admin?tab=2', headers: host })
    t.equal(anonymous.res.statusCode, 302)
    t.equal(anonymous.res.headers.location, '/login', 'the entry point: relative')
    const cookie = sessionCookie(anonymous.res)!

    const post = async (password: string) => {
      const form = await loginForm(app, cookie)
      return await call(app, {
        method: 'POST',
        url: '/login',
        headers: { ...host, cookie: form.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ _username: 'admin', _password: password, _csrf_token: form.token }).toString()
      })
    }
    t.equal((await post('wrong')).res.headers.location, '/login?error=1', 'a failed login check: relative')
    const success = await post(passwords.admin)
    t.equal(success.res.headers.location, '/admin?tab=2', 'a successful one, to the saved target: relative')
    const logged = sessionCookie(success.res)!
    const out = await call(app, { url: `/logout?_csrf_token=${encodeURIComponent(await csrfToken(app, logged))}`, headers: { ...host, cookie: logged } })
    t.equal(out.res.statusCode, 302)
    t.equal(out.res.headers.location, '/', 'logout: relative')
  })
}

t.test('with trustedHosts the redirects are absolute, from the vetted host; another Host gets 400', async (t) => {
  const app = await securedApp({ trustedHosts: ['^example\\.test$'], security: await formLoginSecurity() })
  t.teardown(() => app.close())
  const anonymous = await call(app, { url: '/admin' })
  t.equal(anonymous.res.headers.location, 'http://example.test/login')
  const forged = await call(app, { url: '/admin', headers: { host: EVIL } })
  t.equal(forged.res.statusCode, 400)
  t.equal(forged.res.headers.location, undefined)
})
