import t from 'tap'
import { buildApp } from '../helpers.js'

t.test('GET with the wrong trailing slash: 301 to the absolute toggled URL, query kept', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const cases: Array<[string, string, string]> = [
    ['example.test', '/blog?page=2', 'http://example.test/blog/?page=2'],
    ['example.test:8080', '/blog', 'http://example.test:8080/blog/'],
    ['Example.Test', '/about/', 'http://example.test/about'],
    ['example.test', '/about//', 'http://example.test/about'],
    ['example.test', '/hello/bob/?x=%20y', 'http://example.test/hello/bob?x=%20y']
  ]
  for (const [host, url, location] of cases) {
    const res = await app.inject({ url, headers: { host } })
    t.equal(res.statusCode, 301, url)
    t.equal(res.headers.location, location, url)
    t.equal(res.headers['content-type'], 'text/html; charset=utf-8')
    t.notOk(res.headers['cache-control'], 'no Cache-Control')
    t.match(res.body, `<meta http-equiv="refresh" content="0;url='${location.replace(/&/g, '&amp;')}'" />`)
    t.match(res.body, `Redirecting to <a href="${location.replace(/&/g, '&amp;')}">`)
  }
})

t.test('HEAD redirects too: the GET\'s status and headers (Content-Length included), an empty body', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'HEAD', url: '/blog', headers: { host: 'example.test' } })
  const get = await app.inject({ method: 'GET', url: '/blog', headers: { host: 'example.test' } })
  t.equal(res.statusCode, 301)
  t.equal(res.headers.location, 'http://example.test/blog/')
  t.equal(res.body, '')
  t.equal(res.headers['content-length'], get.headers['content-length'])
  t.equal(Number(res.headers['content-length']), Buffer.byteLength(get.body))
})

t.test('the redirect passes kernel.response (robots header in debug)', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/blog', headers: { host: 'example.test' } })
  t.equal(res.headers['x-robots-tag'], 'noindex')
})

t.test('markup in a redirected path is escaped in the body and encoded in Location', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => app.get('/q/:x/', async () => 'q'))
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/q/"onmouseover=alert(1)?a=<b>', headers: { host: 'example.test' } })
  t.equal(res.statusCode, 301)
  t.notMatch(res.body, '<b>')
  t.notMatch(res.body, '"onmouseover')
})
