import { readFileSync, writeFileSync } from 'node:fs'
import t from 'tap'
import type { Test } from 'tap'
import { packageRoot } from '../../src/errors/kernel-files.js'
import { buildApp } from '../helpers.js'

/**
 * The debug 404 and 405 pages of fixed requests, byte for byte: the pages are assembled from
 * cached parts, and these prove the assembly changes nothing. Only what differs between two
 * identical requests is normalised (the profile token, the CSP nonces), and what moves with the
 * kernel's own code (the line the router raises on, the checkout's path).
 * `UPDATE_PAGE_FIXTURES=1` rewrites the fixtures.
 */
const fixtures = new URL('./fixtures/pages/', import.meta.url)

function normalised (body: string): string {
  return body
    .replaceAll(packageRoot, '<root>')
    .replace(/nonce="[^"]+"/g, 'nonce="<nonce>"')
    .replace(/(_profiler\/|_wdt\/|kwdt-|data-token="|>)[0-9a-f]{6}(?=["<])/g, '$1<token>')
    .replace(/(router\.(?:ts|js)) line \d+/g, '$1 line <n>')
}

function pinned (t: Test, name: string, response: { body: string, headers: Record<string, unknown> }): void {
  const file = new URL(name, fixtures)
  // the headers the page's exception decides (the debug message percent-encoded, Allow, Vary)
  const headers = JSON.stringify(Object.fromEntries(['x-debug-exception', 'allow', 'vary', 'content-type'].map((name) => [name, response.headers[name] ?? null])), null, 2) + '\n'
  const headersFile = new URL(name.replace(/\.html$/, '.headers.json'), fixtures)
  if (process.env.UPDATE_PAGE_FIXTURES === '1') {
    writeFileSync(file, normalised(response.body))
    writeFileSync(headersFile, headers)
  }
  t.equal(normalised(response.body), readFileSync(file, 'utf8'), name)
  t.equal(headers, readFileSync(headersFile, 'utf8'), `${name}: headers`)
}

// client-sent text of every kind the page shows: markup and quotes in the path, a referer and headers
const hostile = {
  host: 'Example.TEST:8080',
  accept: 'text/html',
  referer: 'http://ref.test/<b>"x"&amp;\'y\'',
  'user-agent': 'agent <script>alert(1)</script>',
  cookie: 'session=secret-value',
  'x-custom': '`=\'"<>&'
}

t.test('debug 404 and 405 pages, profiler off', async (t) => {
  const app = await buildApp({ debug: true, profiler: false })
  t.teardown(() => app.close())
  const notFound = await app.inject({ url: '/robots.txt?q=<i>', headers: hostile })
  t.equal(notFound.statusCode, 404)
  pinned(t, 'not-found.html', notFound)
  const markup = await app.inject({ url: '/a/%3Cscript%3E/"x"/<b>', headers: { host: 'example.test', accept: '*/*' } })
  t.equal(markup.statusCode, 404)
  pinned(t, 'not-found-markup.html', markup)
  const wrongMethod = await app.inject({ method: 'DELETE', url: '/hello/x', headers: hostile })
  t.equal(wrongMethod.statusCode, 405)
  pinned(t, 'method-not-allowed.html', wrongMethod)
})

t.test('debug 404 and 405 pages with the profiler: token, toolbar, closest routes', async (t) => {
  const app = await buildApp({ debug: true, profiler: { storage: 'memory' } })
  t.teardown(() => app.close())
  const notFound = await app.inject({ url: '/helo/x', headers: hostile })
  t.equal(notFound.statusCode, 404)
  t.match(notFound.body, 'Closest routes')
  pinned(t, 'profiled-not-found.html', notFound)
  const requirement = await app.inject({ url: '/items/abc', headers: { host: 'example.test', accept: 'text/html' } })
  t.equal(requirement.statusCode, 404)
  pinned(t, 'profiled-requirement.html', requirement)
  const wrongMethod = await app.inject({ method: 'PATCH', url: '/form', headers: hostile })
  t.equal(wrongMethod.statusCode, 405)
  pinned(t, 'profiled-method-not-allowed.html', wrongMethod)
})
