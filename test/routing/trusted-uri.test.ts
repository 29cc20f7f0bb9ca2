// Absolute URLs are built from trusted parts only: the scheme is http or https (Symfony's
// Request::isSecure()), the host passed `trustedHosts` (Symfony's trusted_hosts)
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { createKernelApp } from '../../index.js'
import type { KernelOptions } from '../../index.js'
import { exampleUsers, passwords, SECRET } from '../security/app.js'

async function app (kernel: KernelOptions = {}, trustProxy = true): Promise<FastifyInstance> {
  const app = await createKernelApp({
    kernel: {
      debug: true,
      profiler: { storage: 'memory' },
      session: { secret: SECRET },
      security: {
        users: await exampleUsers(),
        firewalls: [{ name: 'main', pattern: '^/', formLogin: { loginPath: '/login', defaultTargetPath: '/admin' } }],
        accessControl: [{ path: '^/admin', roles: 'ROLE_ADMIN' }]
      },
      ...kernel
    },
    fastify: { logger: false, trustProxy }
  })
  app.get('/admin', async () => 'admin')
  app.get('/login', async (_request, reply) => reply.type('text/html').send(`<input name="_csrf_token" value="${reply.generateCsrf()}">`))
  app.get('/blog/', async () => 'blog')
  await app.ready()
  return app
}

const hostile = 'javascript:alert(1)//'

t.test('X-Forwarded-Proto: only http and https are schemes; anything else is http', async (t) => {
  // the host vetted, so that the login redirects are absolute too
  const server = await app({ trustedHosts: ['^example\\.test$'] })
  t.teardown(() => server.close())
  const headers = { host: 'example.test', 'x-forwarded-proto': hostile }

  const miss = await server.inject({ url: '/nope', headers: { ...headers, accept: 'application/json' } })
  t.equal(miss.json().detail, 'No route found for "GET http://example.test/nope"')
  t.equal(miss.headers['x-debug-token-link'], `http://example.test/_profiler/${String(miss.headers['x-debug-token'])}`)
  const page = await server.inject({ url: '/nope', headers })
  t.notMatch(page.body, /href="javascript|javascript:alert\(1\)\/\/example/, 'the header is only shown, in the headers table')
  t.match(page.body, `href="http://example.test/_profiler/${String(page.headers['x-debug-token'])}"`, 'the profile link on the debug page')

  const redirect = await server.inject({ url: '/blog?x=1', headers })
  t.equal(redirect.statusCode, 301)
  t.equal(redirect.headers.location, 'http://example.test/blog/?x=1')

  const login = await server.inject({ url: '/admin', headers })
  t.equal(login.statusCode, 302)
  t.equal(login.headers.location, 'http://example.test/login', 'the entry point redirects to the login form')

  // the login form's CSRF token, from a session of its own
  const loginPage = await server.inject({ url: '/login', headers: { host: 'example.test' } })
  const form = { cookie: String(loginPage.headers['set-cookie']).split(';')[0], token: /name="_csrf_token" value="([^"]+)"/.exec(loginPage.body)?.[1] ?? '' }
  const post = (password: string) => server.inject({ method: 'POST', url: '/login', headers: { ...headers, cookie: form.cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ _username: 'admin', _password: password, _csrf_token: form.token }).toString() })
  const failed = await post('wrong')
  t.equal(failed.headers.location, 'http://example.test/login?error=1', 'the login failure redirect')
  const check = await post(passwords.admin)
  t.equal(check.statusCode, 302)
  t.equal(check.headers.location, 'http://example.test/admin', 'the login success redirect')

  for (const [proto, scheme] of [['https', 'https'], ['HTTPS', 'https'], ['on', 'https'], ['ssl', 'https'], ['1', 'https'], ['http', 'http'], ['ftp', 'http'], ['https:', 'http']]) {
    const res = await server.inject({ url: '/blog', headers: { host: 'example.test', 'x-forwarded-proto': proto } })
    t.equal(res.headers.location, `${scheme}://example.test/blog/`, proto)
  }
})

t.test('without a trusted proxy the header is ignored', async (t) => {
  const server = await app({}, false)
  t.teardown(() => server.close())
  const res = await server.inject({ url: '/blog', headers: { host: 'example.test', 'x-forwarded-proto': 'https' } })
  t.equal(res.headers.location, 'http://example.test/blog/')
})

t.test('trustedHosts: a host no pattern matches gets 400 Untrusted Host through the error page', async (t) => {
  const server = await app({ trustedHosts: ['^example\\.test$', '^(.+\\.)?example\\.org$'] })
  t.teardown(() => server.close())
  const evil = await server.inject({ url: '/admin', headers: { host: 'evil.example', accept: 'application/json' } })
  t.equal(evil.statusCode, 400, 'not the login redirect to http://evil.example/login')
  t.notOk(evil.headers.location)
  t.equal(evil.json().detail, 'Untrusted Host "evil.example".')
  t.equal(evil.json().class, 'fastify-kernel/BadRequestHttpException')
  const html = await server.inject({ url: '/blog', headers: { host: 'evil.example:8080' } })
  t.equal(html.statusCode, 400, 'a redirect is refused too')
  t.match(html.body, '<span class="class">fastify-kernel/SuspiciousOperationException</span>')
  t.match(html.body, 'Untrusted Host &quot;evil.example&quot;.')
  const miss = await server.inject({ url: '/nope', headers: { host: 'notexample.test', accept: 'application/json' } })
  t.equal(miss.statusCode, 400, 'patterns are regular expressions: anchor them')

  for (const host of ['example.test', 'EXAMPLE.test:8080', 'example.org', 'www.example.org']) {
    const res = await server.inject({ url: '/blog', headers: { host } })
    t.equal(res.statusCode, 301, host)
  }
  const forwarded = await server.inject({ url: '/blog', headers: { host: 'example.test', 'x-forwarded-host': 'evil.example', accept: 'application/json' } })
  t.equal(forwarded.statusCode, 400, 'a trusted proxy\'s X-Forwarded-Host is checked as well')
  t.equal(forwarded.json().detail, 'Untrusted Host "evil.example".')

  const prod = await app({ debug: false, trustedHosts: ['^example\\.test$'] })
  t.teardown(() => prod.close())
  const res = await prod.inject({ url: '/admin', headers: { host: 'evil.example' } })
  t.equal(res.statusCode, 400)
  t.match(res.body, 'The server returned a "400 Bad Request".')
})

t.test('trustedHosts patterns that are not regular expressions fail register', async (t) => {
  await t.rejects(createKernelApp({ kernel: { trustedHosts: ['^ok$', '(unclosed'] } }), /option "trustedHosts" has patterns that are not regular expressions: "\(unclosed"/)
})
