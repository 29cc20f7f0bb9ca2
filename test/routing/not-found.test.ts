import t from 'tap'
import { buildApp } from '../helpers.js'
import { createKernelApp } from '../../index.js'

const json = { accept: 'application/json' }

t.test('404 message: method, absolute URL from the Host header, raw path', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())

  const cases: Array<[string, string, string]> = [
    ['EXAMPLE.test:8080', '/nope', 'No route found for "GET http://example.test:8080/nope"'],
    ['example.test:80', '/nope', 'No route found for "GET http://example.test/nope"'],
    ['example.test', '/robots.txt', 'No route found for "GET http://example.test/robots.txt"'],
    ['example.test', '/favicon.ico', 'No route found for "GET http://example.test/favicon.ico"'],
    ['example.test', '/nope?z=1&b=2', 'No route found for "GET http://example.test/nope"'],
    ['example.test', '/a/b/type/x,y%2Cz%C3', 'No route found for "GET http://example.test/a/b/type/x,y%2Cz%C3"'],
    ['example.test', '/HELLO/x', 'No route found for "GET http://example.test/HELLO/x"'],
    ['example.test', '/items/abc', 'No route found for "GET http://example.test/items/abc"'],
    ['example.test', '/de/contact', 'No route found for "GET http://example.test/de/contact"']
  ]
  for (const [host, url, message] of cases) {
    const res = await app.inject({ url, headers: { host, ...json } })
    t.equal(res.statusCode, 404, url)
    t.equal(res.json().detail, message, url)
  }
})

t.test('404 cause: the last path tried, trailing slash toggled for GET and HEAD only', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const cases: Array<[string, string, string]> = [
    ['GET', '/nope', '/nope/'],
    ['GET', '/nope/', '/nope'],
    ['GET', '/nope///', '/nope'],
    ['GET', '/robots.txt', '/robots.txt/'],
    ['HEAD', '/nope', '/nope/'],
    ['POST', '/nope', '/nope'],
    ['DELETE', '/nope/', '/nope/']
  ]
  for (const [method, url, tried] of cases) {
    const res = await app.inject({ method, url, headers: { host: 'example.test' } })
    t.equal(res.statusCode, 404, `${method} ${url}`)
    const page = await app.inject({ method: method === 'HEAD' ? 'GET' : method, url, headers: { host: 'example.test' } })
    if (method !== 'HEAD') t.match(page.body, `No routes found for &quot;${tried}&quot;.`, `${method} ${url}`)
  }
})

t.test('the root path is never toggled', async (t) => {
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/x', async () => 'x')
  t.teardown(() => app.close())
  for (const url of ['/', '//']) {
    const res = await app.inject({ url, headers: { host: 'example.test' } })
    t.equal(res.statusCode, 404, url)
    t.match(res.body, `No routes found for &quot;${url}&quot;.`, url)
  }
})

t.test('referer suffix: raw header value, only when non-empty, never on 405', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  let res = await app.inject({ url: '/nope', headers: { host: 'example.test', referer: 'http://from.test/page?q="1"', ...json } })
  t.equal(res.json().detail, 'No route found for "GET http://example.test/nope" (from "http://from.test/page?q="1"")')
  res = await app.inject({ url: '/nope', headers: { host: 'example.test', referer: '', ...json } })
  t.equal(res.json().detail, 'No route found for "GET http://example.test/nope"')
  res = await app.inject({ method: 'DELETE', url: '/form', headers: { host: 'example.test', referer: 'http://from.test/', ...json } })
  t.equal(res.json().detail, 'No route found for "DELETE http://example.test/form": Method Not Allowed (Allow: GET, POST, PUT)')
})

t.test('the 404 carries no extra headers', async (t) => {
  const app = await buildApp({ debug: false })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/nope', headers: { host: 'example.test' } })
  t.equal(res.statusCode, 404)
  t.notOk(res.headers.allow)
  t.notOk(res.headers['www-authenticate'])
  t.notOk(res.headers.location)
})

t.test('an invalid Host is a 400', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/nope', headers: { host: 'bad host!', ...json } })
  t.equal(res.statusCode, 400)
  t.equal(res.json().detail, 'Invalid Host "bad host!".')
  t.equal(res.json().class, 'fastify-kernel/BadRequestHttpException')
  const matched = await app.inject({ url: '/about', headers: { host: 'BAD HOST!' } })
  t.equal(matched.statusCode, 400, 'also on a route that exists')
  t.match(matched.body, 'Invalid Host &quot;bad host!&quot;.')
})

t.test('X-Forwarded-* is ignored without a trusted proxy and used with one', async (t) => {
  const plain = await buildApp()
  t.teardown(() => plain.close())
  let res = await plain.inject({ url: '/nope', headers: { host: 'example.test', 'x-forwarded-host': 'evil.test', 'x-forwarded-proto': 'https', ...json } })
  t.equal(res.json().detail, 'No route found for "GET http://example.test/nope"')

  const proxied = await buildApp({ debug: true }, { trustProxy: true })
  t.teardown(() => proxied.close())
  res = await proxied.inject({ url: '/nope', headers: { host: 'example.test', 'x-forwarded-host': 'public.test', 'x-forwarded-proto': 'https', ...json } })
  t.equal(res.json().detail, 'No route found for "GET https://public.test/nope"')
})
