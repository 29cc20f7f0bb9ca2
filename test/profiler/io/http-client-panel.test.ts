/**
 * The HTTP Client panel's bodies, "copy as cURL", slow calls and likely N+1, against a real
 * local HTTP server, with fetch (Node's undici) and node:http.
 */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { once } from 'node:events'
import { createServer, get, request as httpRequest } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { gzipSync } from 'node:zlib'
import { createKernelApp } from '../../../index.js'
import { MAX_BODY } from '../../../src/profiler/panels/http-client/http-body.js'
import { curlCommand, shellQuote } from '../../../src/profiler/panels/http-client/curl.js'
import { flaggedPanels, page, profiled } from '../helpers.js'

const SECRET_BODY = { user: 'ada', password: 'hunter2', nested: { api_token: 't-123', shown: 'yes' } }

const server = createServer((request: IncomingMessage, response: ServerResponse) => {
  const url = request.url ?? '/'
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    if (url === '/json') {
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' })
      response.end(JSON.stringify(SECRET_BODY))
    } else if (url === '/gzip') {
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
      response.end(gzipSync(JSON.stringify({ zipped: true, secret: 'no' })))
    } else if (url === '/weird') {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'x-unknown' })
      response.end('not really encoded')
    } else if (url === '/big') {
      response.writeHead(200, { 'content-type': 'text/plain' })
      response.end('x'.repeat(MAX_BODY + 1000))
    } else if (url === '/png') {
      response.writeHead(200, { 'content-type': 'image/png' })
      response.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]))
    } else if (url === '/echo') {
      response.writeHead(200, { 'content-type': String(request.headers['content-type'] ?? 'text/plain') })
      response.end(Buffer.concat(chunks))
    } else {
      response.writeHead(200, { 'content-type': 'text/plain' })
      response.end(`page ${url}`)
    }
  })
})
server.listen(0, '127.0.0.1')
await once(server, 'listening')
t.teardown(() => { server.closeAllConnections(); server.close() })
const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`

function nodeGet (path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(`${base}${path}`, (response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => { body += chunk })
      response.on('end', () => { resolve(body) })
    }).on('error', reject)
  })
}

function nodePost (path: string, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (response) => { response.resume(); response.on('end', resolve) })
    request.on('error', reject)
    request.end(body)
  })
}

t.test('the bodies: text types only, masked by field name, decoded, cut at 64 KiB; the app reads them unchanged', async (t) => {
  const app = await createKernelApp({ kernel: { debug: true } })
  const read: Record<string, unknown> = {}
  app.get('/calls', async () => {
    read.json = await (await fetch(`${base}/json`)).json()
    read.echo = await (await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer s3cr3t' }, body: JSON.stringify({ q: 'books', token: 'abc' }) })).json()
    read.gzip = await (await fetch(`${base}/gzip`)).json()
    read.big = (await (await fetch(`${base}/big`)).text()).length
    read.png = (await (await fetch(`${base}/png`)).arrayBuffer()).byteLength
    read.node = JSON.parse(await nodeGet('/json'))
    await nodePost('/echo', JSON.stringify({ password: 'x' }))
    await nodeGet('/weird')
    return 'ok'
  })
  t.teardown(() => app.close())
  const { profile, token } = await profiled(app, { url: '/calls' })
  t.same(read, { json: SECRET_BODY, echo: { q: 'books', token: 'abc' }, gzip: { zipped: true, secret: 'no' }, big: MAX_BODY + 1000, png: 8, node: SECRET_BODY }, 'every body reaches the app whole')
  const [json, echo, gzip, big, png, node, nodeEcho, weird] = profile.collected.http_client!.calls

  t.same(JSON.parse(json.responseBody!.text!), { user: 'ada', password: '******', nested: { api_token: '******', shown: 'yes' } }, 'a JSON response, secret fields masked')
  t.equal(json.responseBody!.size, JSON.stringify(SECRET_BODY).length)
  t.same(JSON.parse(echo.requestBody!.text!), { q: 'books', token: '******' }, 'a JSON request body (fetch sends it as a stream), masked')
  t.same(JSON.parse(echo.responseBody!.text!), { q: 'books', token: '******' })
  t.same(JSON.parse(gzip.responseBody!.text!), { zipped: true, secret: '******' }, 'a gzip body decoded')
  t.equal(big.responseBody!.cut, true, 'a long body is cut')
  t.equal(big.responseBody!.size, MAX_BODY + 1000, 'its whole size counted')
  t.equal(big.responseBody!.text!.length, MAX_BODY)
  t.equal(png.responseBody, undefined, 'a binary body is not kept')
  t.same(JSON.parse(node.responseBody!.text!), { user: 'ada', password: '******', nested: { api_token: '******', shown: 'yes' } }, 'node:http\'s response body too')
  t.equal(nodeEcho.requestBody, undefined, 'node:http\'s request body is not captured')
  t.same(weird.responseBody, { size: 18, note: 'not shown: its content-encoding (x-unknown) could not be decoded' }, 'an encoding it cannot undo: said, not shown')
  t.notMatch(JSON.stringify(profile.collected.http_client), /hunter2|t-123|s3cr3t|"abc"/, 'no secret stored')

  const panel = (await page(app, `/_profiler/${token}?panel=http_client`)).body
  t.match(panel, /<div class="body" data-body="response"><div class="body-head">Response body: 80 bytes<\/div><pre>\{\n {2}&quot;user&quot;: &quot;ada&quot;,\n {2}&quot;password&quot;: &quot;\*\*\*\*\*\*&quot;/, 'shown indented, escaped')
  t.match(panel, new RegExp(`Response body: ${MAX_BODY + 1000} bytes, <b>cut</b>: the first 64 KiB kept`))
  t.match(panel, /<script src="\/_profiler\/profiler\.js" nonce="[\w-]+"><\/script>/, 'the pages\' script, for the copy buttons')
  const script = await page(app, '/_profiler/profiler.js')
  t.equal(script.statusCode, 200)
  t.match(script.headers['content-type'], 'text/javascript')
  t.match(script.body, 'navigator.clipboard')
})

t.test('copy as cURL: method, URL, headers and body, secrets masked, every argument quoted for the shell', async (t) => {
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/curl', async () => {
    await (await fetch(`${base}/echo?api_key=k-1&page=2`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer s3cr3t', 'x-note': 'it\'s $(rm -rf ~) `x`' }, body: JSON.stringify({ q: 'o\'reilly', password: 'p' }) })).text()
    await (await fetch(`${base}/plain`)).text()
    await nodePost('/echo', '{}')
    return 'ok'
  })
  t.teardown(() => app.close())
  const { profile, token } = await profiled(app, { url: '/curl' })
  const [post, plain, node] = profile.collected.http_client!.calls
  // what a POSIX shell makes of the command: its words, none run
  const words = (command: string): string[] => execFileSync('bash', ['-c', `printf '%s\\0' ${command.replace(/^curl /, '')}`]).toString().split('\0').slice(0, -1)
  t.same(words(post.curl!), [
    '-X', 'POST', `${base}/echo?api_key=******&page=2`,
    '-H', 'content-type: application/json', '-H', 'authorization: ******', '-H', 'x-note: it\'s $(rm -rf ~) `x`',
    '-H', 'accept: */*', '-H', 'accept-language: *', '-H', 'sec-fetch-mode: cors', '-H', 'user-agent: node',
    '--compressed', '--data-raw', '{"q":"o\'reilly","password":"******"}'
  ], 'each argument as it was, the hostile header value one word, secrets masked')
  t.equal(plain.curl, `curl '${base}/plain' -H 'accept: */*' -H 'accept-language: *' -H 'sec-fetch-mode: cors' -H 'user-agent: node' --compressed`, 'a GET: no -X')
  t.equal(node.curl, `curl -X 'POST' '${base}/echo' -H 'content-type: application/json'`, 'node:http: without its body (not captured)')
  t.same(words(shellQuote('\'; touch /tmp/pwned; echo \'')), ['\'; touch /tmp/pwned; echo \''], 'a quote cannot close the argument')
  t.equal(curlCommand('HEAD', 'http://x/', [], undefined), 'curl --head \'http://x/\'')

  const panel = (await page(app, `/_profiler/${token}?panel=http_client`)).body
  t.match(panel, /<button type="button" class="copy" data-copy-from="curl-1">Copy as cURL<\/button>/, 'a copy button, no inline handler')
  t.match(panel, /<pre id="curl-1" class="curl">curl -X &#x27;POST&#x27;/, 'the command, escaped for HTML')
  t.match(panel, /data-call="3">[\s\S]*?the request body is not in it \(not text, cut, or node:http's, which is not captured\)/)
  t.notMatch(panel, /s3cr3t/)
})

t.test('slow calls are highlighted above thresholds.slow_http_call; its default is 500 ms; a bad value is refused', async (t) => {
  const app = await createKernelApp({ kernel: { debug: true, profiler: { thresholds: { slow_http_call: 0 } } } })
  app.get('/slow', async () => { await (await fetch(`${base}/plain`)).text(); return 'ok' })
  t.teardown(() => app.close())
  const { token } = await profiled(app, { url: '/slow' })
  const panel = (await page(app, `/_profiler/${token}?panel=http_client`)).body
  t.match(panel, /<tr class="row-warning" data-call="1">[\s\S]*?<span class="flag" data-slow>slow<\/span>/, 'every call is slow at 0 ms')
  t.match(panel, /data-slow-count>1</)
  t.match(panel, /Slow \(≥ 0 ms\)/)
  const toolbar = (await page(app, `/_wdt/${token}`)).body
  t.match(toolbar, /data-kwdt="http_client">[\s\S]*?kwdt-badge kwdt-badge-warning"[\s\S]*?data-kwdt-slow>1</)

  const fast = await createKernelApp({ kernel: { debug: true } })
  fast.get('/fast', async () => { await (await fetch(`${base}/plain`)).text(); return 'ok' })
  t.teardown(() => fast.close())
  const quick = await profiled(fast, { url: '/fast' })
  const quickPanel = (await page(fast, `/_profiler/${quick.token}?panel=http_client`)).body
  t.match(quickPanel, /Slow \(≥ 500 ms\)/, 'the default a developer notices')
  t.match(quickPanel, /<tr class="" data-call="1">/)
  await t.rejects(createKernelApp({ kernel: { debug: true, profiler: { thresholds: { slow_http_call: -1 } } } }), /option "profiler\.thresholds\.slow_http_call" must be >= 0/)
})

t.test('calls to one URL shape 3 times or more (ids in the path, values of the query taken out) are a likely N+1', async (t) => {
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/books', async () => {
    for (const id of [1, 2, 3]) await (await fetch(`${base}/books/${id}/reviews?lang=en`)).text()
    for (const id of ['5f8d0d55b54764421b7156c9', '6a8d0d55b54764421b7156c9']) await (await fetch(`${base}/authors/${id}`)).text()
    await nodeGet('/authors/7a8d0d55b54764421b7156c9')
    await (await fetch(`${base}/plain`)).text()
    return 'ok'
  })
  t.teardown(() => app.close())
  const { profile, token } = await profiled(app, { url: '/books' })
  t.same(flaggedPanels(profile, 'nPlusOne'), ['http_client'])
  const panel = (await page(app, `/_profiler/${token}?panel=http_client`)).body
  t.match(panel, new RegExp(`<table id="http-n-plus-one">[\\s\\S]*?<td>3</td><td>3</td><td class="mono num">[\\d.]+</td><td class="mono">GET ${base.replace(/\./g, '\\.')}/books/\\{id\\}/reviews\\?lang&#x3D;</td>`), 'the shape, its calls and its different URLs')
  t.match(panel, /GET http:\/\/127\.0\.0\.1:\d+\/authors\/\{id\}<\/td>/, 'ObjectIds too, fetch and node:http alike')
  t.match(panel, /data-panel="http_client" class="active"><span>HTTP Client<\/span><span class="badge badge-warning">7 \(N\+1\)<\/span>/)
  const toolbar = (await page(app, `/_wdt/${token}`)).body
  t.match(toolbar, /data-kwdt="http_client">[\s\S]*?data-kwdt-n-plus-one>2</)
})

t.test('the bodies of a request\'s calls are bounded together (1 MiB)', async (t) => {
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/many', async () => {
    for (let i = 0; i < 18; i++) await (await fetch(`${base}/big`)).text()
    return 'ok'
  })
  t.teardown(() => app.close())
  const { profile } = await profiled(app, { url: '/many' })
  const bodies = profile.collected.http_client!.calls.map((call) => call.responseBody!)
  t.ok(bodies.slice(0, 16).every((body) => body.text?.length === MAX_BODY), 'the first 16 kept, 64 KiB each')
  t.same(bodies.slice(16).map((body) => [body.text, body.note]), Array(2).fill([undefined, 'not kept: the request\'s calls had kept 1 MiB of bodies already']))
})
