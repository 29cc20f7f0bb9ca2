import t from 'tap'
import net from 'node:net'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../helpers.js'

/** Sends bytes exactly as written (no client normalises the target) and reads the whole answer. */
function rawRequest (port: number, requestLine: string, headerLines: string[]): Promise<{ status: number, headers: Record<string, string>, body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    socket.on('data', (c) => chunks.push(c))
    socket.on('error', reject)
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const split = text.indexOf('\r\n\r\n')
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n')
      const headers: Record<string, string> = {}
      for (const line of lines) {
        const colon = line.indexOf(':')
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text.slice(split + 4) })
    })
    // write, not end: a half-closed socket makes Node drop a response that is not ready yet
    socket.write(`${requestLine}\r\n${[...headerLines, 'Connection: close'].join('\r\n')}\r\n\r\n`)
  })
}

async function listen (debug: boolean): Promise<{ app: FastifyInstance, port: number }> {
  const app = await buildApp({ debug })
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, port: (app.server.address() as net.AddressInfo).port }
}

const json = ['Host: example.test', 'Accept: application/json']

t.test('paths are reported raw: //, . and .. segments, bad encodings, NUL, absolute form', async (t) => {
  const { app, port } = await listen(true)
  t.teardown(() => app.close())
  const cases: Array<[string, string]> = [
    ['//foo', 'http://example.test//foo'],
    ['/foo/../x', 'http://example.test/foo/../x'],
    ['/./a', 'http://example.test/./a'],
    ['/bad%zz', 'http://example.test/bad%zz'],
    ['/bad%E0%A4%A', 'http://example.test/bad%E0%A4%A'],
    ['/hello/%zz/x', 'http://example.test/hello/%zz/x'],
    ['/x%00y', 'http://example.test/x%00y'],
    ['/a/b/type/foo,bar%2Cbaz%', 'http://example.test/a/b/type/foo,bar%2Cbaz%'],
    ['http://other.test:9999/nope?z=1', 'http://example.test/nope']
  ]
  for (const [target, url] of cases) {
    const res = await rawRequest(port, `GET ${target} HTTP/1.1`, json)
    t.equal(res.status, 404, target)
    t.equal(JSON.parse(res.body).detail, `No route found for "GET ${url}"`, target)
  }
  // the asterisk form is the path `/*` (PHP's Symfony prefixes the slash), never the home page
  for (const method of ['GET', 'HEAD', 'PUT']) {
    const star = await rawRequest(port, `${method} * HTTP/1.1`, json)
    t.equal(star.status, 404, `${method} *`)
    if (method !== 'HEAD') t.equal(JSON.parse(star.body).detail, `No route found for "${method} http://example.test/*"`, `${method} *`)
  }
  const absolute = await rawRequest(port, 'GET http://other.test:9999/hello/bob?z=1 HTTP/1.1', json)
  t.equal(absolute.status, 200, 'an absolute-form target is routed by its path')
  t.same(JSON.parse(absolute.body), { name: 'bob' })
})

t.test('8 KiB and 64 KiB paths get the kernel 404 with the whole path, HTML escaped, JSON valid', async (t) => {
  const { app, port } = await listen(true)
  t.teardown(() => app.close())
  for (const size of [8 * 1024, 64 * 1024]) {
    const path = '/' + 'a'.repeat(size)
    const res = await rawRequest(port, `GET ${path} HTTP/1.1`, json)
    t.equal(res.status, 404, `${size}`)
    t.equal(JSON.parse(res.body).detail, `No route found for "GET http://example.test${path}"`)
    t.ok(res.headers['x-debug-exception'].length <= 2000 * 3, 'the debug header is cut')
    const html = await rawRequest(port, `GET ${path}<b> HTTP/1.1`, ['Host: example.test'])
    t.equal(html.status, 404)
    t.notMatch(html.body, '<b>')
  }
  const param = await rawRequest(port, `GET /hello/${'b'.repeat(10_000)} HTTP/1.1`, json)
  t.equal(param.status, 200, 'a long parameter still matches its route')
})

t.test('markup and quotes in path and Referer are escaped in HTML and valid in JSON', async (t) => {
  const { app, port } = await listen(true)
  t.teardown(() => app.close())
  const referer = 'Referer: "><script>alert(1)</script>\'&'
  const html = await rawRequest(port, 'GET /<script>alert(2)</script>"\' HTTP/1.1', ['Host: example.test', referer])
  t.equal(html.status, 404)
  t.notMatch(html.body, '<script>alert')
  t.match(html.body, '&lt;script&gt;alert(2)&lt;/script&gt;&quot;')
  const res = await rawRequest(port, 'GET /<script>"x HTTP/1.1', [...json, referer])
  t.equal(JSON.parse(res.body).detail, 'No route found for "GET http://example.test/<script>"x" (from ""><script>alert(1)</script>\'&")')
})

t.test('a Referer sent as raw UTF-8 bytes is reported as UTF-8, as PHP sees it', async (t) => {
  const { app, port } = await listen(true)
  t.teardown(() => app.close())
  // socket.write encodes the string as UTF-8: é goes out as the two bytes C3 A9
  const res = await rawRequest(port, 'GET /nope HTTP/1.1', [...json, 'Referer: http://r.test/café'])
  t.equal(JSON.parse(res.body).detail, 'No route found for "GET http://example.test/nope" (from "http://r.test/café")')
  t.match(res.headers['x-debug-exception'], 'caf%C3%A9')
  const html = await rawRequest(port, 'GET /nope HTTP/1.1', ['Host: example.test', 'Referer: http://r.test/café'])
  t.match(html.body, '<td>http://r.test/café</td>', 'the request headers table shows it as sent')
  t.notMatch(html.body, 'cafÃ©')
})

t.test('hostile Host headers get a 400, never a 500', async (t) => {
  const { app, port } = await listen(false)
  t.teardown(() => app.close())
  for (const host of ['bad host!', 'a/b', 'x"y', '<script>', 'ex ample.test:80']) {
    const res = await rawRequest(port, 'GET /nope HTTP/1.1', [`Host: ${host}`, 'Accept: application/json'])
    t.equal(res.status, 400, host)
    t.same(JSON.parse(res.body), { type: 'https://tools.ietf.org/html/rfc2616#section-10', title: 'An error occurred', status: 400, detail: 'Bad Request' })
  }
  const long = await rawRequest(port, 'GET /nope HTTP/1.1', [`Host: ${'a'.repeat(10_000)}.test`, 'Accept: application/json'])
  t.equal(long.status, 404, 'a long but valid host name is fine')
})

t.test('production bodies never leak the path or internals for bad input', async (t) => {
  const { app, port } = await listen(false)
  t.teardown(() => app.close())
  const res = await rawRequest(port, 'GET /bad%zz<x> HTTP/1.1', ['Host: example.test'])
  t.equal(res.status, 404)
  t.notMatch(res.body, 'bad%zz')
  t.notMatch(res.body, 'NotFoundHttpException')
  t.notOk(res.headers['x-debug-exception'])
})
