import t from 'tap'
import { buildApp } from '../helpers.js'
import { host, page, profiled } from './helpers.js'
import { createKernelApp } from '../../index.js'

t.test('every profiled response carries X-Debug-Token and an absolute X-Debug-Token-Link', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  for (const [method, url, status] of [['GET', '/about', 200], ['GET', '/robots.txt', 404], ['DELETE', '/form', 405], ['GET', '/blog', 301], ['GET', '/boom', 500], ['HEAD', '/about', 200]] as const) {
    const res = await app.inject({ method, url, headers: { host: 'Example.TEST:8080' } })
    t.equal(res.statusCode, status, `${method} ${url}`)
    t.match(res.headers['x-debug-token'], /^[0-9a-f]{6}$/, `${method} ${url} has a token`)
    t.equal(res.headers['x-debug-token-link'], `http://example.test:8080/_profiler/${String(res.headers['x-debug-token'])}`)
  }
})

t.test('the token link opens the profile; default panel: exception when the request failed, else request', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const miss = await profiled(app, { url: '/robots.txt' })
  const link = new URL(String(miss.res.headers['x-debug-token-link']))
  const failed = await page(app, link.pathname)
  t.equal(failed.statusCode, 200)
  t.match(failed.headers['content-type'], /^text\/html/)
  t.match(failed.body, 'data-panel="exception"')
  t.match(failed.body, 'No route found for &quot;GET http://example.test/robots.txt&quot;')
  t.match(failed.body, 'No routes found for &quot;/robots.txt/&quot;.', 'the cause')
  t.match(failed.body, 'Caused by')

  const ok = await profiled(app, { url: '/about' })
  const fine = await page(app, `/_profiler/${ok.token}`)
  t.match(fine.body, '<main id="panel" data-panel="request">')
  t.match(fine.body, '<span class="status status-success" id="status">200</span>', 'status, coloured')
  t.match(fine.body, `<b id="token">${ok.token}</b>`)
  t.match(fine.body, 'http://example.test/about')
  t.match(fine.body, '127.0.0.1', 'client IP at the top')
})

t.test('panels: each one renders; type=request is ignored; exception panel without an exception', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const { token } = await profiled(app, { url: '/hello/world' })
  const expected: Record<string, RegExp> = {
    request: /id="request-headers"/,
    exception: /No exception was thrown and caught during the request\./,
    routing: /Matched route &quot;hello&quot;/,
    events: /id="timeline"/,
    logs: /<h2>Logs<\/h2>/,
    time: /Time to first byte/
  }
  for (const [panel, marker] of Object.entries(expected)) {
    const res = await page(app, `/_profiler/${token}?panel=${panel}&type=request`)
    t.equal(res.statusCode, 200, panel)
    t.match(res.body, marker, panel)
    t.match(res.body, `<main id="panel" data-panel="${panel}">`)
    t.match(res.body, 'class="active"><span>', 'the menu marks the active panel')
  }
})

t.test('unknown token: 200 "Token not found"; unknown panel on a known token: 404 error page', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const unknown = await page(app, '/_profiler/abcdef?panel=exception&type=request')
  t.equal(unknown.statusCode, 200)
  t.match(unknown.body, 'Token "abcdef" not found.')
  const weird = await page(app, '/_profiler/not-a-token')
  t.equal(weird.statusCode, 200)
  t.match(weird.body, 'Token "not-a-token" not found.')
  t.notOk(unknown.headers['x-debug-token'], 'profiler pages are not profiled')
  t.equal(unknown.headers['x-robots-tag'], 'noindex', 'but get the robots header')

  const { token } = await profiled(app, { url: '/about' })
  const badPanel = await page(app, `/_profiler/${token}?panel=nope`)
  t.equal(badPanel.statusCode, 404)
  t.match(badPanel.body, `<title>Panel &quot;nope&quot; is not available for token &quot;${token}&quot;. (404 Not Found)</title>`)
  const json = await page(app, `/_profiler/${token}?panel=nope`, { accept: 'application/json' })
  t.equal(json.json().detail, `Panel "nope" is not available for token "${token}".`)
  t.notOk(badPanel.headers['x-debug-token'])
})

t.test('/_profiler redirects to /_profiler/; latest; no profiles yet', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const empty = await page(app, '/_profiler/latest')
  t.equal(empty.statusCode, 200)
  t.match(empty.body, 'No profiles have been stored yet.')
  t.notOk(empty.headers['x-debug-token'], 'profiler pages are not profiled')

  const redirect = await profiled(app, { url: '/_profiler' })
  t.equal(redirect.res.statusCode, 301)
  t.equal(redirect.res.headers.location, `http://${host}/_profiler/`)
  t.match(redirect.res.headers['x-debug-token'], /^[0-9a-f]{6}$/, 'the redirect is profiled, as in Symfony')
  t.equal(redirect.profile.collected.request!.route, '_profiler_home_redirect')
  t.equal((await page(app, '/_profiler?method=GET')).headers.location, `http://${host}/_profiler/?method=GET`, 'the query is kept')

  await profiled(app, { url: '/about' })
  const newest = await profiled(app, { url: '/hello/newest' })
  const latest = await page(app, '/_profiler/latest')
  t.equal(latest.statusCode, 200)
  t.match(latest.body, `<b id="token">${newest.token}</b>`)
  t.match(latest.body, 'http://example.test/hello/newest')
  const latestPanel = await page(app, '/_profiler/latest?panel=events')
  t.match(latestPanel.body, 'data-panel="events"')
})

t.test('previous and next profile links', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  // one after the other: later or equal times, and equal ones keep the order of saving
  const first = await profiled(app, { url: '/about' })
  const second = await profiled(app, { url: '/hello/two' })
  const third = await profiled(app, { url: '/hello/three' })
  const middle = await page(app, `/_profiler/${second.token}?panel=routing`)
  t.match(middle.body, `<a href="/_profiler/${first.token}?panel&#x3D;routing" id="previous">`, 'handlebars escapes = in attributes')
  t.match(middle.body, `<a href="/_profiler/${third.token}?panel&#x3D;routing" id="next">`)
  const last = await page(app, `/_profiler/${third.token}`)
  t.notMatch(last.body, 'id="next"')
})

t.test('search page: recent profiles, newest first, with filters', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const a = await profiled(app, { url: '/about' })
  const b = await profiled(app, { url: '/robots.txt', remoteAddress: '10.9.9.9' })
  const c = await profiled(app, { method: 'POST', url: '/form' })
  const all = await page(app, '/_profiler/')
  t.equal(all.statusCode, 200)
  const order = [c.token, b.token, a.token].map((token) => all.body.indexOf(`href="/_profiler/${token}"`))
  t.ok(order.every((at) => at > 0) && order[0] < order[1] && order[1] < order[2], 'newest first')
  t.match(all.body, '<span class="status status-warning">404</span>', 'statuses are coloured')
  t.match(all.body, '<span class="status status-success">200</span>')
  const tokens = async (query: string): Promise<string[]> => {
    const res = await page(app, `/_profiler/?${query}`)
    t.equal(res.statusCode, 200, query)
    return [...res.body.matchAll(/<a href="\/_profiler\/([0-9a-f]{6})">/g)].map((m) => m[1])
  }
  t.same(await tokens('method=POST'), [c.token])
  t.same(await tokens('status=404'), [b.token])
  t.same(await tokens('status=2xx'), [c.token, a.token])
  t.same(await tokens('url=robots'), [b.token])
  t.same(await tokens('ip=10.9'), [b.token])
  t.same(await tokens(`start=${new Date(Date.now() + 60_000).toISOString().slice(0, 16)}`), [])
  t.same(await tokens(`end=${new Date(Date.now() + 60_000).toISOString().slice(0, 16)}&limit=2`), [c.token, b.token])
  t.same(await tokens('status=abc&start=not-a-date&limit=-4&method[]=x'), [c.token, b.token, a.token], 'malformed filters are ignored, never a 500')
})

t.test('the debug error page links the profile and shows the closest routes', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/itemz/12', headers: { host } })
  const token = String(res.headers['x-debug-token'])
  t.match(res.body, `Profile <a href="http://example.test/_profiler/${token}">${token}</a>`)
  t.match(res.body, 'Closest routes, and why they did not match')
  t.match(res.body, 'GET /items/{id} (get_items_id): segment 1 is &quot;itemz&quot;, the route expects &quot;items&quot;')
  const requirement = await app.inject({ url: '/items/abc', headers: { host } })
  const hints = requirement.body.slice(requirement.body.indexOf('id="hints"'))
  t.match(hints, /<li>GET \/items\/\{id\} \(get_items_id\): requirement &quot;id&quot; failed: &quot;abc&quot; does not match \^\\d\+\$<\/li>/)
  t.ok(hints.indexOf('get_items_id') < hints.indexOf('hello'), 'the closest route comes first')
})

t.test('the profiler option: validated, with every bad sub-option named', async (t) => {
  await t.rejects(createKernelApp({ kernel: { debug: true, profiler: { storage: 'disk', maxProfiles: 'many', colour: 1 } as never } }), {
    code: 'KERNEL_INVALID_OPTIONS',
    message: /unknown option "profiler.colour".*option "profiler.storage" must be equal to one of the allowed values \(memory, file\).*option "profiler.maxProfiles" must be integer|option "profiler.storage"/
  })
  await t.rejects(createKernelApp({ kernel: { debug: true, profiler: { allowedNetworks: ['10.0.0.0/8', 'nope', '1.2.3.4/99'] } } }), {
    message: /option "profiler.allowedNetworks": not a CIDR: "nope", "1.2.3.4\/99"/
  })
  await t.rejects(createKernelApp({ kernel: { debug: false, profiler: { maxAge: -1 } } }), { message: /profiler.maxAge/ }, 'validated in production too')
  const off = await createKernelApp({ kernel: { debug: true, profiler: false } })
  t.teardown(() => off.close())
  off.get('/x', async () => 'x')
  const res = await off.inject({ url: '/x' })
  t.notOk(res.headers['x-debug-token'], 'profiler: false turns it off in debug')
  t.equal((await off.inject({ url: '/_profiler/' })).statusCode, 404)
})

t.test('a profile URL with a trailing slash redirects (301) to the profile, query kept, as Symfony does', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const { token } = await profiled(app, { url: '/robots.txt' })
  const redirect = await page(app, `/_profiler/${token}/?panel=routing&type=request`)
  t.equal(redirect.statusCode, 301)
  t.equal(redirect.headers.location, `http://${host}/_profiler/${token}?panel=routing&type=request`)
  t.match(redirect.headers['x-debug-token'], /^[0-9a-f]{6}$/, 'the redirect is profiled (Symfony\'s redirect controller is no profiler page)')
  const followed = await page(app, new URL(String(redirect.headers.location)).pathname + '?panel=routing')
  t.equal(followed.statusCode, 200)
  t.equal((await page(app, '/_profiler/latest/')).headers.location, `http://${host}/_profiler/latest`)

  // a client outside the allowed networks still gets the ordinary 404, as if the route did not exist
  const refused = await buildApp({ debug: true, profiler: { allowedNetworks: ['203.0.113.0/24'] } })
  t.teardown(() => refused.close())
  const denied = await refused.inject({ url: `/_profiler/${token}/`, headers: { host, accept: 'application/json' } })
  t.equal(denied.statusCode, 404)
  t.equal(denied.json().detail, `No route found for "GET http://${host}/_profiler/${token}/"`)
})

t.test('Symfony\'s panel names open the same panels: router, logger; and performance, the timeline\'s name before', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const { token } = await profiled(app, { url: '/hello/x' })
  for (const [symfony, ours] of [['router', 'routing'], ['performance', 'time'], ['logger', 'logs']]) {
    const res = await page(app, `/_profiler/${token}?panel=${symfony}`)
    t.equal(res.statusCode, 200, `?panel=${symfony}`)
    t.match(res.body, `<main id="panel" data-panel="${ours}">`, `?panel=${symfony} opens ${ours}`)
    t.match(res.body, new RegExp(`<a href="[^"]*panel(=|&#x3D;)${ours}" aria-current="page" data-panel="${ours}" class="active">`), 'and marks it in the menu (aria-current too)')
  }
  t.equal((await page(app, `/_profiler/${token}?panel=routerx`)).statusCode, 404, 'other names are still unknown')
  for (const inherited of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
    const res = await page(app, `/_profiler/${token}?panel=${inherited}`, { accept: 'application/json' })
    t.equal(res.statusCode, 404, `?panel=${inherited}`)
    t.equal(res.json().detail, `Panel "${inherited}" is not available for token "${token}".`, 'named as asked')
  }
  t.equal((await page(app, `/_profiler/${token}?panel=router`, { accept: 'application/json' })).statusCode, 200)
  const aliasMissing = await page(app, `/_profiler/${token}?panel=security`, { accept: 'application/json' })
  t.equal(aliasMissing.json().detail, `Panel "security" is not available for token "${token}".`, 'an app without security has no security panel')
})

t.test('a repeated query parameter: the last one wins, as PHP reads it', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const { token } = await profiled(app, { url: '/hello/x' })
  const res = await page(app, `/_profiler/${token}?panel=request&panel=events`)
  t.match(res.body, '<main id="panel" data-panel="events">')
  const search = await page(app, '/_profiler/?method=POST&method=GET')
  t.match(search.body, '<option value="GET" selected>')
  t.notMatch(search.body, '<option value="POST" selected>')
})

t.test('a toolbar URL with a trailing slash redirects (301) to it, as the profile pages do', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const { token } = await profiled(app, { url: '/robots.txt' })
  const redirect = await page(app, `/_wdt/${token}/`)
  t.equal(redirect.statusCode, 301)
  t.equal(redirect.headers.location, `http://${host}/_wdt/${token}`)
  t.equal((await page(app, '/_wdt/empty/')).headers.location, `http://${host}/_wdt/empty`)
  t.equal((await page(app, `/_wdt/${token}`)).statusCode, 200)
})
