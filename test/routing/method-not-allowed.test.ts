import t from 'tap'
import { buildApp } from '../helpers.js'

const headers = { host: 'example.test', accept: 'application/json' }

t.test('405: exact message, Allow header in route-definition order without duplicates', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'DELETE', url: '/form', headers })
  t.equal(res.statusCode, 405)
  t.equal(res.headers.allow, 'GET, POST, PUT', 'GET, POST from the first route, PUT from the second; HEAD never')
  t.equal(res.json().detail, 'No route found for "DELETE http://example.test/form": Method Not Allowed (Allow: GET, POST, PUT)')
  t.equal(res.json().class, 'fastify-kernel/MethodNotAllowedHttpException')
})

t.test('OPTIONS is not special and HEAD is matched as GET', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  let res = await app.inject({ method: 'OPTIONS', url: '/only-post', headers })
  t.equal(res.statusCode, 405)
  t.equal(res.headers.allow, 'POST')
  res = await app.inject({ method: 'HEAD', url: '/only-post', headers })
  t.equal(res.statusCode, 405)
  t.equal(res.headers.allow, 'POST')
  t.equal(res.body, '', 'HEAD has no body')
  res = await app.inject({ method: 'GET', url: '/only-post', headers })
  t.equal(res.json().detail, 'No route found for "GET http://example.test/only-post": Method Not Allowed (Allow: POST)')
})

t.test('a parameter that fails its requirement is a 404, never a 405', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const get = await app.inject({ url: '/items/abc', headers })
  t.equal(get.statusCode, 404)
  const put = await app.inject({ method: 'PUT', url: '/items/abc', headers })
  t.equal(put.statusCode, 404)
  const putDigits = await app.inject({ method: 'PUT', url: '/items/12', headers })
  t.equal(putDigits.statusCode, 405)
  t.equal(putDigits.headers.allow, 'GET, POST')
})

t.test('the 405 cause is a MethodNotAllowedException with an empty message', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'PATCH', url: '/form', headers: { host: 'example.test' } })
  t.match(res.body, /<span class="class">fastify-kernel\/MethodNotAllowedException<\/span><\/div>\s*<div class="message"><\/div>/)
})

t.test('wrong slash: other methods get 404; right slash with a wrong method gets 405', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const wrongSlash = await app.inject({ method: 'POST', url: '/form/', headers })
  t.equal(wrongSlash.statusCode, 404)
  t.equal(wrongSlash.json().detail, 'No route found for "POST http://example.test/form/"')
  const rightSlash = await app.inject({ method: 'DELETE', url: '/blog/', headers })
  t.equal(rightSlash.statusCode, 405)
  t.equal(rightSlash.headers.allow, 'GET')
  const getWrongSlashPostOnly = await app.inject({ method: 'GET', url: '/only-post/', headers })
  t.equal(getWrongSlashPostOnly.statusCode, 404, 'the toggled path only matches another method: 404')
})

t.test('a route refused by its constraints is a 404, not a 405 naming the request\'s own method', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/tenant', { constraints: { host: 'admin.example.test' } }, async () => 'admin')
  })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/tenant', headers: { host: 'admin.example.test' } })).statusCode, 200)
  const res = await app.inject({ url: '/tenant', headers })
  t.equal(res.statusCode, 404)
  t.notOk(res.headers.allow)
})
