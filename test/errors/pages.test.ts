import t from 'tap'
import { buildApp } from '../helpers.js'

const host = 'example.test'

t.test('debug HTML page: title, heading, status, exception chain, request, robots meta', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/robots.txt', headers: { host, accept: 'text/html' } })
  t.equal(res.statusCode, 404)
  t.equal(res.headers['content-type'], 'text/html; charset=utf-8')
  t.match(res.body, '<title>No route found for &quot;GET http://example.test/robots.txt&quot; (404 Not Found)</title>')
  t.match(res.body, /<h1 class="exception-message">No route found for &quot;GET http:\/\/example.test\/robots.txt&quot;<\/h1>/)
  t.match(res.body, 'HTTP 404 Not Found')
  t.match(res.body, '<meta name="robots" content="noindex,nofollow" />')
  const outer = res.body.indexOf('<span class="class">fastify-kernel/NotFoundHttpException</span>')
  const cause = res.body.indexOf('<span class="class">fastify-kernel/ResourceNotFoundException</span>')
  t.ok(outer > 0 && cause > outer, 'the chain is shown outermost first')
  t.match(res.body, 'No routes found for &quot;/robots.txt/&quot;.')
  t.match(res.body, /<ol class="trace">/, 'stack traces are shown')
  // every exception of the chain has its stack trace, the router's cause included (it shares
  // its wrapper's frames: both are raised where the router misses)
  const traced = (html: string): number => html.split('<ol class="trace">').length - 1
  t.equal(traced(res.body.slice(cause)), 1, 'the cause has its stack trace')
  t.match(res.body.slice(cause), /routeNotFound<\/span> in [^<]*router\.(ts|js) line \d+/)
  const wrongMethod = await app.inject({ method: 'DELETE', url: '/hello/x', headers: { host, accept: 'text/html' } })
  t.equal(wrongMethod.statusCode, 405)
  const allowCause = wrongMethod.body.indexOf('<span class="class">fastify-kernel/MethodNotAllowedException</span>')
  t.ok(allowCause > 0)
  t.equal(traced(wrongMethod.body.slice(allowCause)), 1, 'so has the 405\'s cause')
  t.match(res.body, /<th>Method<\/th><td>GET<\/td>/)
  t.match(res.body, /<th>URL<\/th><td>http:\/\/example.test\/robots.txt<\/td>/)
  t.match(res.body, /<th>host<\/th><td>example.test<\/td>/, 'request headers are listed')
})

t.test('debug headers: X-Debug-Exception and X-Debug-Exception-File, percent-encoded', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/nope', headers: { host } })
  t.equal(res.headers['x-debug-exception'], 'No%20route%20found%20for%20%22GET%20http%3A%2F%2Fexample.test%2Fnope%22')
  t.match(res.headers['x-debug-exception-file'], /^%2F.*router\.(ts|js):\d+$/)
  t.equal(res.headers.vary, 'Accept')
})

t.test('production HTML page: Symfony\'s short page and nothing else', async (t) => {
  const app = await buildApp({ debug: false })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/robots.txt', headers: { host, accept: 'text/html' } })
  t.equal(res.statusCode, 404)
  t.match(res.body, '<title>An Error Occurred: Not Found</title>')
  t.match(res.body, '<h1>Oops! An Error Occurred</h1>')
  t.match(res.body, '<h2>The server returned a "404 Not Found".</h2>')
  t.notMatch(res.body, 'No route found')
  t.notMatch(res.body, 'NotFoundHttpException')
  t.notMatch(res.body, 'robots.txt')
  for (const name of Object.keys(res.headers)) t.notMatch(name, /^x-debug/, `no ${name}`)
  t.notOk(res.headers['x-robots-tag'], 'robots indexing is allowed by default in production')
})

t.test('JSON for application/json and application/x-json; problem+json for problem clients', async (t) => {
  const prod = await buildApp({ debug: false })
  t.teardown(() => prod.close())
  for (const accept of ['application/json', 'application/x-json', 'text/plain;q=0.5, application/json']) {
    const res = await prod.inject({ url: '/nope', headers: { host, accept } })
    t.equal(res.headers['content-type'], 'application/json', accept)
    t.same(res.json(), { type: 'https://tools.ietf.org/html/rfc2616#section-10', title: 'An error occurred', status: 404, detail: 'Not Found' }, accept)
  }
  const problem = await prod.inject({ url: '/nope', headers: { host, accept: 'application/problem+json' } })
  t.equal(problem.headers['content-type'], 'application/problem+json')
  t.equal(problem.json().status, 404)

  const notAllowed = await prod.inject({ method: 'PATCH', url: '/form', headers: { host, accept: 'application/json' } })
  t.equal(notAllowed.json().detail, 'Method Not Allowed')
  t.equal(notAllowed.headers.allow, 'GET, POST, PUT', 'Allow stays in production')

  const debug = await buildApp({ debug: true })
  t.teardown(() => debug.close())
  const res = await debug.inject({ url: '/nope', headers: { host, accept: 'application/json' } })
  const body = res.json()
  t.equal(body.detail, 'No route found for "GET http://example.test/nope"')
  t.equal(body.class, 'fastify-kernel/NotFoundHttpException')
  t.ok(Array.isArray(body.trace) && body.trace.length > 0 && typeof body.trace[0].file === 'string')
})

t.test('anything else, */* included, answers HTML', async (t) => {
  const app = await buildApp({ debug: false })
  t.teardown(() => app.close())
  for (const accept of ['*/*', 'text/html', 'application/xml', 'image/png', '', 'garbage;;;,,q=x']) {
    const res = await app.inject({ url: '/nope', headers: { host, accept } })
    t.match(res.headers['content-type'], /^text\/html/, JSON.stringify(accept))
  }
})

t.test('an uncaught controller error: 500, message only in debug', async (t) => {
  const debug = await buildApp({ debug: true })
  t.teardown(() => debug.close())
  let res = await debug.inject({ url: '/boom', headers: { host } })
  t.equal(res.statusCode, 500)
  t.match(res.body, '<title>kaboom (500 Internal Server Error)</title>')
  t.match(res.body, 'inner failure', 'the cause is shown')
  t.match(res.body, '<span class="class">TypeError</span>')

  const prod = await buildApp({ debug: false })
  t.teardown(() => prod.close())
  res = await prod.inject({ url: '/boom', headers: { host } })
  t.equal(res.statusCode, 500)
  t.notMatch(res.body, 'kaboom')
  t.match(res.body, 'The server returned a "500 Internal Server Error".')
  res = await prod.inject({ url: '/boom', headers: { host, accept: 'application/json' } })
  t.same(res.json(), { type: 'https://tools.ietf.org/html/rfc2616#section-10', title: 'An error occurred', status: 500, detail: 'Internal Server Error' })
})

t.test("Fastify's own errors keep their 4xx status and get the same pages", async (t) => {
  const app = await buildApp({ debug: false }, { bodyLimit: 100 })
  t.teardown(() => app.close())
  let res = await app.inject({ method: 'POST', url: '/form', headers: { host, 'content-type': 'application/json', accept: 'application/json' }, payload: '{"broken": ' })
  t.equal(res.statusCode, 400)
  t.same(res.json(), { type: 'https://tools.ietf.org/html/rfc2616#section-10', title: 'An error occurred', status: 400, detail: 'Bad Request', code: 'FST_ERR_CTP_INVALID_JSON_BODY' }, 'the error\'s code, an RFC 9457 extension member')
  res = await app.inject({ method: 'POST', url: '/form', headers: { host, 'content-type': 'application/json' }, payload: JSON.stringify({ big: 'x'.repeat(500) }) })
  t.equal(res.statusCode, 413)
  t.match(res.body, 'The server returned a "413 Payload Too Large".')
  res = await app.inject({ method: 'POST', url: '/form', headers: { host, 'content-type': 'application/x-unknown' }, payload: 'x' })
  t.equal(res.statusCode, 415)
  t.match(res.body, 'The server returned a "415 Unsupported Media Type".')

  const debug = await buildApp({ debug: true })
  t.teardown(() => debug.close())
  res = await debug.inject({ method: 'POST', url: '/form', headers: { host, 'content-type': 'application/json', accept: 'application/json' }, payload: '{"broken": ' })
  t.equal(res.statusCode, 400)
  t.equal(res.json().class, 'fastify/FastifyError')
})

t.test('every request-derived string is escaped on the debug page', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const res = await app.inject({
    url: '/%3Cscript%3Ealert(1)%3C/script%3E/"<img src=x onerror=alert(2)>',
    headers: { host, referer: '"><script>alert(3)</script>', 'x-evil': '<script>alert(4)</script>' }
  })
  t.equal(res.statusCode, 404)
  t.notMatch(res.body, /<script>alert/)
  t.notMatch(res.body, /<img src=x/)
  t.match(res.body, '&lt;script&gt;alert(3)&lt;/script&gt;')
  t.match(res.body, '&lt;script&gt;alert(4)&lt;/script&gt;')
})

t.test('secrets in request headers are masked on the debug page', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/nope', headers: { host, authorization: 'Bearer s3cr3t-token', cookie: 'sid=abc123' } })
  t.notMatch(res.body, 's3cr3t-token')
  t.notMatch(res.body, 'abc123')
  t.match(res.body, /<th>authorization<\/th><td>\*\*\*\*\*\*<\/td>/)
})

t.test('a failing kernel.exception listener is rendered as the error, never Fastify\'s default', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.kernel.on('kernel.exception', () => { throw new Error('listener broke') }, { priority: 10 })
  })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/nope', headers: { host, accept: 'application/json' } })
  t.equal(res.statusCode, 500)
  t.equal(res.json().detail, 'listener broke')
})
