import t from 'tap'
import { Readable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { profilerOf, buildApp } from '../helpers.js'
import { host, page, profiled } from './helpers.js'
import { lastClosingBody } from '../../src/profiler/toolbar/inject.js'
import { hashPassword } from '../../src/security/index.js'

const HTML = '<!DOCTYPE html><html><head><title>t</title></head><body><p>hello</p></body></html>'
// the stylesheet is the script's to fetch: the toolbar's shadow root adopts it
const SNIPPET = /<div id="kwdt-([0-9a-f]{6})" class="kwdt-snippet" data-kwdt-snippet data-token="\1" data-wdt="\/_wdt\/\1" hidden><\/div><script src="\/_wdt\/toolbar.js" nonce="[\w-]+" data-token="\1"><\/script>/

/** An app whose routes answer HTML in each of the ways the toolbar must tell apart. */
function pages (app: FastifyInstance): void {
  const html = (body = HTML) => async (_request: unknown, reply: any) => reply.type('text/html; charset=utf-8').send(body)
  app.get('/page', { config: { name: 'page' } }, html())
  app.get('/two-bodies', html('<html><body><script>const s = "</body>"</script><p>x</p></BODY></html>'))
  app.get('/no-body', html('<p>a fragment</p>'))
  app.get('/sized', async (_request, reply) => reply.type('text/html').header('content-length', Buffer.byteLength(HTML)).send(HTML))
  app.get('/buffer', async (_request, reply) => reply.type('text/html; charset=iso-8859-1').send(Buffer.from('<html><body>caf\u00e9</body></html>', 'latin1')))
  app.get('/json', async () => ({ html: '</body>' }))
  app.get('/text', async (_request, reply) => reply.type('text/plain').send(HTML))
  app.get('/redirect', async (_request, reply) => reply.code(302).header('location', '/page').type('text/html').send(HTML))
  app.get('/download', async (_request, reply) => reply.type('text/html').header('content-disposition', 'attachment; filename="page.html"').send(HTML))
  app.get('/inline-disposition', async (_request, reply) => reply.type('text/html').header('content-disposition', 'inline').send(HTML))
  app.get('/encoded', async (_request, reply) => reply.type('text/html').header('content-encoding', 'identity').send(HTML))
  app.get('/stream', async (_request, reply) => reply.type('text/html').send(Readable.from([HTML])))
  app.get('/opt-out', async (_request, reply) => reply.type('text/html').header('X-Debug-Toolbar', 'off').send(HTML))
}

t.test('injected just before the last </body> of an HTML page; Content-Length corrected', async (t) => {
  const app = await buildApp({ debug: true }, {}, pages)
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/page', headers: { host } })
  const token = res.headers['x-debug-token']
  const match = SNIPPET.exec(res.body)
  t.ok(match, 'the snippet is there')
  t.equal(match![1], token, 'it loads this request\'s toolbar')
  t.ok(res.body.indexOf('</body>') > res.body.indexOf('kwdt-'), 'before </body>')
  t.match(res.body, /<\/script>\n<\/body><\/html>$/, 'and only there')
  t.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body))

  const two = await app.inject({ url: '/two-bodies', headers: { host } })
  t.ok(two.body.indexOf('kwdt-') > two.body.indexOf('<p>x</p>'), 'the last </body> (any case) is the one')
  t.match(two.body, /<\/script>\n<\/BODY><\/html>$/)

  const sized = await app.inject({ url: '/sized', headers: { host } })
  t.match(sized.body, SNIPPET)
  t.equal(Number(sized.headers['content-length']), Buffer.byteLength(sized.body), 'a Content-Length set by the app is corrected')

  const buffer = await app.inject({ url: '/buffer', headers: { host } })
  t.match(buffer.rawPayload.toString('latin1'), SNIPPET, 'a Buffer body too')
  t.ok(buffer.rawPayload.includes(Buffer.from('caf\u00e9', 'latin1')), 'its bytes kept as they were')

  await app.kernelProfiler!.settled()
  const profile = await profilerOf(app).storage.load(token as string)
  t.equal(profile?.collected.request?.response?.size, Buffer.byteLength(res.body), 'the profile records the size sent')
})

t.test('not injected where Symfony does not inject it, nor where it cannot be', async (t) => {
  const app = await buildApp({ debug: true }, {}, pages)
  t.teardown(() => app.close())
  const cases: Array<[string, Record<string, string>?]> = [
    ['/no-body'], ['/json'], ['/text'], ['/redirect'], ['/download'], ['/encoded'], ['/stream'], ['/opt-out'],
    ['/page', { 'x-requested-with': 'XMLHttpRequest' }]
  ]
  for (const [url, headers] of cases) {
    const res = await app.inject({ url, headers: { host, ...headers } })
    t.match(res.headers['x-debug-token'], /^[0-9a-f]{6}$/, `${url} is profiled`)
    t.notMatch(res.body, 'kwdt', `${url}${headers === undefined ? '' : ' (XHR)'}: no toolbar`)
  }
  t.notOk((await app.inject({ url: '/opt-out', headers: { host } })).headers['x-debug-toolbar'], 'the opt-out header is not sent on')
  t.match((await app.inject({ url: '/inline-disposition', headers: { host } })).body, SNIPPET, 'an inline Content-Disposition is no attachment')
  const profilerPage = await page(app, '/_profiler/')
  t.notMatch(profilerPage.body, 'kwdt', 'profiler pages: not profiled, so no toolbar')

  const off = await buildApp({ debug: true, profiler: { toolbar: false } }, {}, pages)
  t.teardown(() => off.close())
  const noToolbar = await off.inject({ url: '/page', headers: { host } })
  t.ok(noToolbar.headers['x-debug-token'], 'profiler: { toolbar: false } keeps the profiler')
  t.equal(noToolbar.body, HTML, 'but adds no toolbar')
  t.notOk(off.kernel.listeners('kernel.response').some((l) => l.name === 'web debug toolbar'), 'nor its listener')

  const prod = await buildApp({ debug: false, profiler: true }, {}, pages)
  t.teardown(() => prod.close())
  t.equal((await prod.inject({ url: '/page', headers: { host } })).body, HTML, 'production: never')
  t.same(prod.kernel.listeners('kernel.response').map((l) => l.name), [], 'production: no listener on the response path')
  t.equal((await prod.inject({ url: '/_wdt/empty', headers: { host } })).statusCode, 404, 'production: no /_wdt routes')

  const remote = await buildApp({ debug: true, profiler: { allowedNetworks: ['203.0.113.0/24'] } }, {}, pages)
  t.teardown(() => remote.close())
  const outsider = await remote.inject({ url: '/page', headers: { host } })
  t.ok(outsider.headers['x-debug-token'])
  t.equal(outsider.body, HTML, 'a client that may not open the profiler gets no toolbar')
})

t.test('the toolbar listener runs after the profiler\'s, as Symfony\'s (-128 after -100), before the CSP nonces and robots', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  t.same(app.kernel.listeners('kernel.response'), [
    { stage: 'kernel.response', name: 'profiler', priority: -100, origin: 'profiler' },
    { stage: 'kernel.response', name: 'web debug toolbar', priority: -128, origin: 'profiler' },
    { stage: 'kernel.response', name: 'content security policy nonces', priority: -130, origin: 'kernel' },
    { stage: 'kernel.response', name: 'disallow robots indexing', priority: -255, origin: 'kernel' }
  ])
})

t.test('lastClosingBody', async (t) => {
  t.equal(lastClosingBody('<body></body>'), 6)
  t.equal(lastClosingBody('</BoDy> x </body> y'), 10)
  t.equal(lastClosingBody('</b></p>'), -1)
  t.equal(lastClosingBody(''), -1)
  t.equal(lastClosingBody('</'), -1)
})

t.test('/_wdt answers as Symfony\'s toolbar action: fragment, 404 empty, empty, ordinary 404', async (t) => {
  const app = await buildApp({ debug: true }, {}, pages)
  t.teardown(() => app.close())
  const { token } = await profiled(app, { url: '/page' })

  const toolbar = await page(app, `/_wdt/${token}`)
  t.equal(toolbar.statusCode, 200)
  t.equal(toolbar.headers['content-type'], 'text/html; charset=utf-8')
  t.notOk(toolbar.headers['x-debug-token'], 'the toolbar is not profiled')
  t.notMatch(toolbar.body, /<html|<body|<script|<style|style=/i, 'a fragment, with no inline script or style (the page\'s CSP applies to it)')
  t.match(toolbar.body, /<b data-kwdt-status>200<\/b> <span class="kwdt-detail kwdt-route" data-kwdt-route>@ page<\/span>/)
  t.match(toolbar.body, `href="/_profiler/${token}?panel&#x3D;request"`, 'links into the profile')
  for (const panel of ['request', 'exception', 'routing', 'events', 'logs', 'time']) t.match(toolbar.body, `data-panel="${panel}"`, `a link to the ${panel} panel`)
  t.notMatch(toolbar.body, 'data-kwdt-user', 'no security configured: no user item')
  t.match(toolbar.body, /data-kwdt-version>\d+\.\d+\.\d+</)

  const unknown = await page(app, '/_wdt/abcdef')
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.body, '', 'unknown token: 404 with an empty body')
  t.notOk(unknown.headers['x-debug-token'])

  const empty = await page(app, '/_wdt/empty')
  t.equal(empty.statusCode, 200)
  t.equal(empty.body, '')
  t.match(empty.headers['x-debug-token'], /^[0-9a-f]{6}$/, '/_wdt/empty is profiled')

  for (const [path, type, text] of [['/_wdt/styles.css', 'text/css; charset=utf-8', ':host'], ['/_wdt/toolbar.js', 'text/javascript; charset=utf-8', 'X-Debug-Token']]) {
    const asset = await page(app, path)
    t.equal(asset.statusCode, 200, path)
    t.equal(asset.headers['content-type'], type)
    t.equal(asset.headers['cache-control'], 'max-age=600, private', 'cached by the browser')
    t.notOk(asset.headers['x-debug-token'], 'not profiled')
    t.match(asset.body, text)
  }

  const bare = await page(app, '/_wdt/', { accept: 'application/json' })
  t.equal(bare.statusCode, 404)
  t.equal(bare.json().detail, `No route found for "GET http://${host}/_wdt/"`, '/_wdt/ is the ordinary routing 404')
  t.equal(bare.headers['x-debug-exception'], 'No%20route%20found%20for%20%22GET%20http%3A%2F%2Fexample.test%2F_wdt%2F%22')

  const refused = await buildApp({ debug: true, profiler: { allowedNetworks: ['203.0.113.0/24'] } })
  t.teardown(() => refused.close())
  const outsider = await refused.inject({ url: '/_wdt/empty', headers: { host, accept: 'application/json' } })
  t.equal(outsider.statusCode, 404, 'a client outside allowedNetworks: the ordinary 404')
  t.equal(outsider.json().detail, `No route found for "GET http://${host}/_wdt/empty"`)
})

t.test('the toolbar shows the request: error status, exception, logs by level, user and firewall, locale', async (t) => {
  const app = await buildApp({
    debug: true,
    locale: { enabled: ['en', 'fr'] },
    security: {
      users: { '<b>ada</b>': { password: await hashPassword('pw', { ln: 10, r: 8, p: 1 }), roles: ['ROLE_USER'] } },
      firewalls: [{ name: 'main', pattern: '^/', httpBasic: { realm: 'x' } }]
    }
  }, {}, (app) => {
    app.get('/noisy', async (request) => {
      request.log.warn('careful <img src=x onerror=alert(1)>')
      request.log.error('broken')
      throw new Error('nope')
    })
  })
  t.teardown(() => app.close())
  const basic = `Basic ${Buffer.from('<b>ada</b>:pw').toString('base64')}`
  const { token } = await profiled(app, { url: '/noisy', headers: { authorization: basic } })
  const toolbar = (await page(app, `/_wdt/${token}`)).body
  t.match(toolbar, 'kwdt-status kwdt-error', 'red on 5xx')
  t.match(toolbar, /<b data-kwdt-status>500<\/b>/)
  t.match(toolbar, '<b>Error</b>', 'the exception')
  t.match(toolbar, /<span class="kwdt-badge kwdt-badge-error" data-kwdt-logs>\d+<\/span>/, 'errors highlighted')
  t.match(toolbar, '<b data-kwdt-user>&lt;b&gt;ada&lt;/b&gt;</b>', 'the user, escaped')
  t.match(toolbar, '<td data-kwdt-firewall>main</td>')
  t.match(toolbar, '<b data-kwdt-locale>en</b>')
  t.notMatch(toolbar, /<b>ada|<img/, 'nothing request-derived unescaped')
  t.match(toolbar, /<td data-kwdt-controller-time>\d+\.\d ms<\/td>/, 'the controller\'s time')

  const notFound = await profiled(app, { url: '/missing/%3Cscript%3E', headers: { authorization: basic } })
  const missToolbar = (await page(app, `/_wdt/${notFound.token}`)).body
  t.match(missToolbar, 'kwdt-status kwdt-warning', 'red on 4xx too')
  t.match(missToolbar, '(no controller ran)')
  t.notMatch(missToolbar, '<script>')
  const anonymous = await profiled(app, { url: '/missing/page' })
  t.match((await page(app, `/_wdt/${anonymous.token}`)).body, /<b data-kwdt-user>anonymous<\/b>/, 'security configured: the user item, anonymous without credentials')
})
