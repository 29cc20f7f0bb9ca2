// symfony-behaviour.md §1 "Matching rules", case by case, plus the cases the README once
// listed as known limits (%2F, several trailing slashes, malformed escapes)
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../helpers.js'
import { basic, passwords, securedApp } from '../security/app.js'

const json = { host: 'example.test', accept: 'application/json' }
const html = { host: 'example.test', accept: 'text/html' }

async function cause (app: FastifyInstance, method: string, url: string): Promise<string | undefined> {
  const res = await app.inject({ method, url, headers: html })
  return /No routes found for &quot;(.*?)&quot;\./.exec(res.body)?.[1]
}

t.test('paths are matched percent-decoded and case-sensitively', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const decoded = await app.inject({ url: '/hello/J%C3%BCrgen%20x', headers: json })
  t.equal(decoded.statusCode, 200)
  t.same(decoded.json(), { name: 'Jürgen x' })
  t.equal((await app.inject({ url: '/HELLO/x', headers: json })).statusCode, 404)
})

t.test('HEAD is matched as GET: same status and headers, empty body', async (t) => {
  const app = await buildApp({ debug: false })
  t.teardown(() => app.close())
  for (const url of ['/about', '/nope', '/blog', '/only-post']) {
    const get = await app.inject({ method: 'GET', url, headers: json })
    const head = await app.inject({ method: 'HEAD', url, headers: json })
    t.equal(head.statusCode, get.statusCode, url)
    t.equal(head.headers.location, get.headers.location, url)
    t.equal(head.headers.allow, get.headers.allow, url)
    t.equal(head.body, '', url)
  }
})

t.test('a parameter matches one or more characters: /hello/ and /hello are 404s', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const slash = await app.inject({ url: '/hello/', headers: json })
  t.equal(slash.statusCode, 404, 'the controller does not run with an empty name')
  t.equal(slash.json().detail, 'No route found for "GET http://example.test/hello/"')
  t.equal(await cause(app, 'GET', '/hello/'), '/hello')
  const bare = await app.inject({ url: '/hello', headers: json })
  t.equal(bare.statusCode, 404, 'not a redirect to /hello/')
  t.notOk(bare.headers.location)
  t.equal(await cause(app, 'GET', '/hello'), '/hello/')
  t.equal((await app.inject({ method: 'HEAD', url: '/hello/', headers: json })).statusCode, 404)
  // other methods: no 405 from a route the empty parameter does not match
  const put = await app.inject({ method: 'PUT', url: '/hello/', headers: json })
  t.equal(put.statusCode, 404)
  t.notOk(put.headers.allow)
  t.equal(await cause(app, 'PUT', '/hello/'), '/hello/')
  t.equal((await app.inject({ url: '/hello/x', headers: json })).statusCode, 200)
})

t.test('an explicit requirement accepting the empty string and the wildcard keep their own rule', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/maybe/:id(^\\d*$)', async (request) => ({ id: (request.params as { id: string }).id }))
    app.get('/files/*', async (request) => ({ rest: (request.params as Record<string, string>)['*'] }))
  })
  t.teardown(() => app.close())
  const maybe = await app.inject({ url: '/maybe/', headers: json })
  t.equal(maybe.statusCode, 200)
  t.same(maybe.json(), { id: '' })
  const files = await app.inject({ url: '/files/', headers: json })
  t.equal(files.statusCode, 200)
  t.same(files.json(), { rest: '' })
})

t.test('every parameter of a segment needs a character; a route refused that way gives way to the slash redirect', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/range/:from-:to', async (request) => request.params)
    app.get('/doc/:name.json', async (request) => request.params)
    app.get('/tag/:tag', async () => 'tag')
    app.get('/tag', async () => 'tags')
  })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/range/1-2', headers: json })).statusCode, 200)
  t.equal((await app.inject({ url: '/range/1-', headers: json })).statusCode, 404)
  t.equal((await app.inject({ url: '/range/-', headers: json })).statusCode, 404)
  t.equal((await app.inject({ url: '/doc/.json', headers: json })).statusCode, 404)
  // Fastify's router would serve /tag/ to /tag/:tag with an empty tag: Symfony redirects to /tag
  const tag = await app.inject({ url: '/tag/?page=2', headers: json })
  t.equal(tag.statusCode, 301)
  t.equal(tag.headers.location, 'http://example.test/tag?page=2')
  const head = await app.inject({ method: 'HEAD', url: '/tag/', headers: json })
  t.equal(head.statusCode, 301)
  t.equal(head.body, '')
})

t.test('a path matching another method is a 405; a failed requirement is a 404, never a 405', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const wrongMethod = await app.inject({ method: 'PATCH', url: '/form', headers: json })
  t.equal(wrongMethod.statusCode, 405)
  t.equal(wrongMethod.headers.allow, 'GET, POST, PUT')
  for (const [method, url] of [['GET', '/items/abc'], ['POST', '/items/abc'], ['GET', '/de/contact']]) {
    const res = await app.inject({ method, url, headers: json })
    t.equal(res.statusCode, 404, `${method} ${url}`)
    t.notOk(res.headers.allow)
  }
})

t.test('trailing slash: GET and HEAD redirect, other methods 404, the right slash with a wrong method 405', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const get = await app.inject({ url: '/blog?page=2', headers: json })
  t.equal(get.statusCode, 301)
  t.equal(get.headers.location, 'http://example.test/blog/?page=2')
  const twoSlashes = await app.inject({ url: '/about//', headers: json })
  t.equal(twoSlashes.statusCode, 301)
  t.equal(twoSlashes.headers.location, 'http://example.test/about')
  const post = await app.inject({ method: 'POST', url: '/about/', headers: json })
  t.equal(post.statusCode, 404)
  t.equal(await cause(app, 'POST', '/about/'), '/about/')
  const rightSlash = await app.inject({ method: 'PUT', url: '/blog/', headers: json })
  t.equal(rightSlash.statusCode, 405)
  t.equal(rightSlash.headers.allow, 'GET')
})

t.test('several trailing slashes: a route without parameters ending in / serves them (Symfony\'s static routes)', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  for (const url of ['/blog//', '/blog///', '/blog//?page=2']) {
    const res = await app.inject({ url, headers: json })
    t.equal(res.statusCode, 200, url)
    t.equal(res.body, 'blog', url)
  }
  const put = await app.inject({ method: 'PUT', url: '/blog//', headers: json })
  t.equal(put.statusCode, 405, 'the static route matched the path: another method is a 405')
  t.equal(put.headers.allow, 'GET')
  t.equal(put.json().detail, 'No route found for "PUT http://example.test/blog//": Method Not Allowed (Allow: GET)', 'the path is reported as sent')
  // a route with parameters takes at most one trailing slash, as Symfony's dynamic routes
  const dynamic = await app.inject({ url: '/hello/bob//', headers: json })
  t.equal(dynamic.statusCode, 301)
  t.equal(dynamic.headers.location, 'http://example.test/hello/bob')
  t.equal((await app.inject({ url: '//', headers: json })).statusCode, 404, 'the root is not a static route with a trailing slash')
})

t.test('%2F is decoded before matching, as Symfony does', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const slashInName = await app.inject({ url: '/hello/a%2Fb', headers: json })
  t.equal(slashInName.statusCode, 404, '/hello/a/b has two segments')
  t.equal(slashInName.json().detail, 'No route found for "GET http://example.test/hello/a%2Fb"')
  t.equal(await cause(app, 'GET', '/hello/a%2Fb'), '/hello/a%2Fb/', 'the cause reports the path as sent, toggled')
  const blog = await app.inject({ url: '/blog%2F', headers: json })
  t.equal(blog.statusCode, 200, '/blog%2F is /blog/')
  t.equal(blog.body, 'blog')
  const lower = await app.inject({ url: '/blog%2f', headers: json })
  t.equal(lower.statusCode, 200)
  const encodedPercent = await app.inject({ url: '/hello/a%252Fb', headers: json })
  t.same(encodedPercent.json(), { name: 'a%2Fb' }, 'decoded once, as rawurldecode does')
})

t.test('an escape that does not decode is matched as the text it is', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const cases: Array<[string, string]> = [['/hello/%zz', '%zz'], ['/hello/100%', '100%'], ['/hello/a%2', 'a%2'], ['/hello/%E0%A4', '%E0%A4'], ['/hello/%C3%BC%FF', 'ü%FF']]
  for (const [url, name] of cases) {
    const res = await app.inject({ url, headers: json })
    t.equal(res.statusCode, 200, url)
    t.same(res.json(), { name }, url)
  }
  const miss = await app.inject({ url: '/bad%zz', headers: json })
  t.equal(miss.statusCode, 404)
  t.equal(miss.json().detail, 'No route found for "GET http://example.test/bad%zz"')
  t.equal(await cause(app, 'GET', '/bad%E0%A4%A'), '/bad%E0%A4%A/')
})

t.test('the redirect from a route refused for an empty parameter is a route match: the firewall runs first', async (t) => {
  const app = await securedApp({}, (app) => { app.get('/admin/:section', async () => 'section') })
  t.teardown(() => app.close())
  const anonymous = await app.inject({ url: '/admin/', headers: { host: 'example.test' } })
  t.equal(anonymous.statusCode, 401, 'as for any request under ^/admin')
  t.notOk(anonymous.headers.location)
  const admin = await app.inject({ url: '/admin/', headers: { host: 'example.test', authorization: basic('admin', passwords.admin) } })
  t.equal(admin.statusCode, 301)
  t.equal(admin.headers.location, 'http://example.test/admin')
  t.not(admin.body, 'section', 'the refused route\'s handler never runs')
})
