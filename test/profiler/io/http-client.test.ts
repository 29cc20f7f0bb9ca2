/**
 * The HTTP Client panel against a real local HTTP server: every call the request makes through
 * fetch (undici) or node:http, with no code in the app beyond registering the kernel.
 */
import t from 'tap'
import { get, request as httpRequest } from 'node:http'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { createKernelApp } from '../../../index.js'
import { page, profiled } from '../helpers.js'
import { startUpstream } from './upstream.js'
import { profilerOf } from '../../helpers.js'

/** Reads a node:http GET to its end. */
function httpGet (url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, (response) => { response.resume(); response.on('end', () => { resolve(response.statusCode ?? 0) }) }).on('error', reject)
  })
}

async function closedPort (): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

t.test('a user with only fetch and http.get sees their calls: method, masked URL, status, headers, time', async (t) => {
  const upstream = await startUpstream(t)
  // nothing but the kernel, registered as the README says
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/calls', async () => {
    const response = await fetch(`${upstream.url}/ok?api_key=k3y&page=2`, { headers: { authorization: 'Bearer t0k3n', 'x-trace': 'abc' } })
    await response.text()
    await httpGet(`${upstream.url}/status/404?password=pw`)
    return 'done'
  })
  t.teardown(() => app.close())
  const { profile, token } = await profiled(app, { url: '/calls' })
  const calls = profile.collected.http_client!.calls
  t.equal(calls.length, 2)
  const [viaFetch, viaHttp] = calls
  t.equal(viaFetch.method, 'GET')
  t.equal(viaFetch.url, `${upstream.url}/ok?api_key=******&page=2`, 'secret query values masked, others kept')
  t.equal(viaFetch.status, 200)
  t.type(viaFetch.duration, 'number')
  t.ok(viaFetch.requestHeaders!.some(([name, value]) => name === 'authorization' && value === '******'), 'a credential header masked')
  t.ok(viaFetch.requestHeaders!.some(([name, value]) => name === 'x-trace' && value === 'abc'))
  t.ok(viaFetch.responseHeaders!.some(([name, value]) => name.toLowerCase() === 'set-cookie' && value === '******'), 'the response\'s cookie masked')
  t.ok(viaFetch.responseHeaders!.some(([name, value]) => name.toLowerCase() === 'x-upstream' && value === 'yes'))
  t.equal(viaHttp.url, `${upstream.url}/status/404?password=******`)
  t.equal(viaHttp.status, 404)
  t.type(viaHttp.duration, 'number')
  t.ok(viaHttp.start >= viaFetch.start, 'in the order they were made')
  t.same(upstream.hits, ['GET /ok?api_key=k3y&page=2', 'GET /status/404?password=pw'], 'the calls themselves went out unchanged')

  const panel = await page(app, `/_profiler/${token}?panel=http_client`)
  t.equal(panel.statusCode, 200)
  t.match(panel.body, `GET ${upstream.url}/ok?api_key&#x3D;******&amp;page&#x3D;2`)
  t.notMatch(panel.body, 'k3y')
  t.notMatch(panel.body, 't0k3n')
  t.match(panel.body, /data-panel="http_client" class="active"><span>HTTP Client<\/span><span class="badge badge-info">2<\/span>/, 'its badge: the count')

  const toolbar = await page(app, `/_wdt/${token}`)
  t.match(toolbar.body, /data-kwdt="http_client">[\s\S]*?<span class="kwdt-badge" data-kwdt-count>2<\/span>/, 'a toolbar item with the count, not highlighted under the threshold')
  t.match(toolbar.body, /data-kwdt="http_client">[\s\S]*?data-kwdt-time>\d+\.\d ms/, 'and the total time')
})

t.test('user-info in a URL is masked (node:http, and the Redactor for any URL)', async (t) => {
  const upstream = await startUpstream(t)
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/auth', async () => {
    await httpGet(`http://user:pa55@127.0.0.1:${upstream.port}/ok`)
    return 'ok'
  })
  t.teardown(() => app.close())
  const { profile } = await profiled(app, { url: '/auth' })
  const [call] = profile.collected.http_client!.calls
  t.equal(call.url, `${upstream.url}/ok`, 'node:http sends user-info as a header, not in the URL')
  t.ok(call.requestHeaders!.some(([name, value]) => name === 'authorization' && value === '******'), 'and that header is masked')
  t.notMatch(JSON.stringify(profile), 'pa55')
  t.equal(profilerOf(app).redactor.url('https://user:pa55@api.test/x?token=1&b=2'), 'https://******@api.test/x?token=******&b=2')
  t.equal(profilerOf(app).redactor.url('https://api.test/a@b?mail=a@b.c'), 'https://api.test/a@b?mail=a@b.c', 'an @ in the path or the query is no user-info')
})

t.test('errors and timeouts: fetch and http.get to a closed port, to a server that never answers, a body cut off', async (t) => {
  const upstream = await startUpstream(t)
  const closed = await closedPort()
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/failures', async () => {
    const outcomes: string[] = []
    await fetch(`http://127.0.0.1:${closed}/refused`).catch(() => outcomes.push('fetch refused'))
    await httpGet(`http://127.0.0.1:${closed}/refused`).catch(() => outcomes.push('http refused'))
    // what AbortSignal.timeout() does, once the request is on the wire (aborted before its
    // connection is made, undici publishes a plain AbortError, without the reason)
    const controller = new AbortController()
    const hung = fetch(`${upstream.url}/hang`, { signal: controller.signal }).catch(() => outcomes.push('fetch timed out'))
    while (!upstream.hits.includes('GET /hang')) await new Promise((resolve) => setImmediate(resolve))
    controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'))
    await hung
    await new Promise<void>((resolve) => {
      const request = httpRequest(`${upstream.url}/hang`, { timeout: 5 })
      request.on('timeout', () => { request.destroy(new Error('no answer in time')) })
      request.on('error', () => { outcomes.push('http timed out'); resolve() })
      request.end()
    })
    await new Promise<void>((resolve) => {
      get(`${upstream.url}/cut`, (response) => { response.resume(); response.on('close', resolve); response.on('error', () => undefined) }).on('error', () => resolve())
    })
    return outcomes
  })
  t.teardown(() => app.close())
  const { profile, res, token } = await profiled(app, { url: '/failures' })
  t.same(res.json(), ['fetch refused', 'http refused', 'fetch timed out', 'http timed out'])
  const calls = profile.collected.http_client!.calls
  t.same(calls.map((call) => call.url.replace(/:\d+/, ':port')), ['/refused', '/refused', '/hang', '/hang', '/cut'].map((path) => `http://127.0.0.1:port${path}`))
  t.match(calls[0].error, /ECONNREFUSED/, 'fetch: the connection refused')
  t.match(calls[1].error, /ECONNREFUSED/, 'node:http: the connection refused')
  t.equal(calls[2].timedOut, true, 'fetch: a TimeoutError, as AbortSignal.timeout() aborts with')
  t.match(calls[2].error, /timeout/)
  t.equal(calls[3].timedOut, true, 'node:http: its timeout event, then the app\'s destroy()')
  t.equal(calls[3].error, 'no answer in time')
  t.equal(calls[4].status, 200, 'the headers came')
  t.match(calls[4].error, /cut off/, 'then the body was cut off')
  for (const call of calls) t.type(call.duration, 'number', 'each ended')

  const panel = await page(app, `/_profiler/${token}?panel=http_client`)
  t.match(panel.body, /data-panel="http_client" class="active"><span>HTTP Client<\/span><span class="badge badge-error">5<\/span>/, 'the failures in the menu')
  t.equal(panel.body.match(/<span class="flag flag-error">timeout<\/span>/g)?.length, 2, 'the timeouts flagged')
  const toolbar = await page(app, `/_wdt/${token}`)
  t.match(toolbar.body, /data-kwdt="http_client">[\s\S]*?kwdt-badge kwdt-badge-error" data-kwdt-count>5</, 'the toolbar item highlighted as an error')
})

t.test('a call still running when the response is sent shows as running', async (t) => {
  const upstream = await startUpstream(t)
  const app = await createKernelApp({ kernel: { debug: true } })
  const controller = new AbortController()
  app.get('/fire-and-forget', async () => {
    fetch(`${upstream.url}/hang`, { signal: controller.signal }).catch(() => undefined)
    // the request reached the server: the call is under way
    while (!upstream.hits.includes('GET /hang')) await new Promise((resolve) => setImmediate(resolve))
    return 'sent'
  })
  t.teardown(async () => { controller.abort(); await app.close() })
  const { profile, token } = await profiled(app, { url: '/fire-and-forget' })
  const [call] = profile.collected.http_client!.calls
  t.equal(call.duration, null, 'running')
  t.notOk(call.error)
  const panel = await page(app, `/_profiler/${token}?panel=http_client`)
  t.match(panel.body, '<span class="flag flag-info">running</span>')
})

t.test('above the threshold, the toolbar item is highlighted', async (t) => {
  const upstream = await startUpstream(t)
  const app = await createKernelApp({ kernel: { debug: true, profiler: { thresholds: { http_client: 0 } } } })
  app.get('/one', async () => (await fetch(`${upstream.url}/ok`)).text())
  t.teardown(() => app.close())
  const { token } = await profiled(app, { url: '/one' })
  const toolbar = await page(app, `/_wdt/${token}`)
  t.match(toolbar.body, /data-kwdt="http_client">[\s\S]*?kwdt-badge kwdt-badge-warning" data-kwdt-count>1</)
  t.match(toolbar.body, 'highlighted above 0 ms')
})

t.test('a hostile URL and hostile response headers are escaped', async (t) => {
  const upstream = await startUpstream(t)
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/hostile', async () => {
    // node:http lets < and > through in a path (fetch would percent-encode them)
    await new Promise<void>((resolve, reject) => {
      get({ host: '127.0.0.1', port: upstream.port, path: '/ok?q=<script>alert(1)</script>', headers: { 'x-evil': '"><img src=x onerror=alert(2)>' } }, (response) => { response.resume(); response.on('end', resolve) }).on('error', reject)
    })
    return 'ok'
  })
  t.teardown(() => app.close())
  const { token, profile } = await profiled(app, { url: '/hostile' })
  t.match(profile.collected.http_client!.calls[0].url, '<script>alert(1)</script>', 'stored as it was')
  const panel = await page(app, `/_profiler/${token}?panel=http_client`)
  t.notMatch(panel.body, '<script>alert(1)')
  t.notMatch(panel.body, '<img src=x')
  t.match(panel.body, '&lt;script&gt;alert(1)&lt;/script&gt;')
  t.match(panel.body, '&quot;&gt;&lt;img src&#x3D;x onerror&#x3D;alert(2)&gt;')
  const toolbar = await page(app, `/_wdt/${token}`)
  t.notMatch(toolbar.body, '<script>alert(1)')
})

t.test('50 concurrent requests, each with its own fetch and http.get, get exactly their own calls', async (t) => {
  const upstream = await startUpstream(t)
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/mine/:id', async (request) => {
    const id = (request.params as { id: string }).id
    await (await fetch(`${upstream.url}/ok?id=${id}`)).text()
    await httpGet(`${upstream.url}/ok?id=${id}&via=http`)
    return id
  })
  t.teardown(() => app.close())
  const ids = Array.from({ length: 50 }, (_value, index) => String(index))
  const results = await Promise.all(ids.map((id) => profiled(app, { url: `/mine/${id}` })))
  for (const [index, { profile }] of results.entries()) {
    t.same(profile.collected.http_client!.calls.map((call) => call.url), [`${upstream.url}/ok?id=${index}`, `${upstream.url}/ok?id=${index}&via=http`], `request ${index}: its own two calls`)
  }
})

t.test('calls made at start-up or outside any request are not attributed', async (t) => {
  const upstream = await startUpstream(t)
  const app = await createKernelApp({ kernel: { debug: true } })
  await (await fetch(`${upstream.url}/ok?at=startup`)).text()
  app.get('/quiet', async () => 'quiet')
  t.teardown(() => app.close())
  const { profile } = await profiled(app, { url: '/quiet' })
  t.same(profile.collected.http_client, { calls: [] }, 'the panel, empty')
  const panel = await page(app, `/_profiler/${profile.token}?panel=http_client`)
  t.match(panel.body, 'No HTTP call was made during this request')
  const toolbar = await page(app, `/_wdt/${profile.token}`)
  t.notMatch(toolbar.body, 'data-kwdt="http_client"', 'no toolbar item without a call')
})
