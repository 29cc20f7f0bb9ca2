/**
 * Symfony's redirect link (its `sf_redirect` cookie): after a form POST answered with a 303,
 * the page the browser goes to names the POST's profile on its toolbar and request panel. The
 * browser's side, on a real server and Debian's chromium, is test/profiler/processes.test.ts's.
 */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../helpers.js'
import { host } from './helpers.js'

const PAGE = '<!DOCTYPE html><html><head><title>Book</title></head><body><h1>Book</h1></body></html>'

async function bookApp (): Promise<FastifyInstance> {
  return await buildApp({ debug: true }, {}, (app) => {
    app.post('/books', { config: { name: 'book_create' } }, async (_request, reply) => {
      // the app's own cookie on the redirect: kept beside the profiler's
      return reply.header('set-cookie', 'flash=created; Path=/').redirect('/books/1', 303)
    })
    app.get('/books/:id', { config: { name: 'book_show' } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(PAGE))
  })
}

function cookies (header: string | string[] | undefined): string[] {
  return header === undefined ? [] : Array.isArray(header) ? header : [header]
}

t.test('a 303 after a POST: the next request\'s profile, toolbar and request panel name the POST and link its profile; the cookie is then cleared', async (t) => {
  const app = await bookApp()
  t.teardown(() => app.close())
  const post = await app.inject({ method: 'POST', url: '/books', headers: { host } })
  t.equal(post.statusCode, 303)
  const postToken = String(post.headers['x-debug-token'])
  const set = cookies(post.headers['set-cookie'])
  t.ok(set.includes('flash=created; Path=/'), 'the app\'s own cookie is kept')
  const redirect = set.find((cookie) => cookie.startsWith('kernel_redirect='))
  t.match(redirect, /; Path=\/; HttpOnly; SameSite=Lax$/, 'the redirect cookie: a session cookie, HttpOnly, SameSite=Lax')

  const next = await app.inject({ url: '/books/1', headers: { host, cookie: redirect!.split(';')[0] } })
  t.equal(next.statusCode, 200)
  t.match(cookies(next.headers['set-cookie']), [/^kernel_redirect=; Max-Age=0; Path=\/; HttpOnly; SameSite=Lax$/], 'read once, then cleared')
  const profile = await app.kernelProfiler.profileOf(next)
  t.same(profile.collected.request?.redirect, { token: postToken, method: 'POST', route: 'book_create', statusCode: 303 }, 'its profile keeps where it came from')
  const toolbar = await app.inject({ url: `/_wdt/${profile.token}`, headers: { host } })
  t.match(toolbar.body, `<a class="kwdt-main" href="/_profiler/${postToken}" title="The profile of the request that redirected here"><span class="kwdt-label">Redirect from</span> <span class="kwdt-badge">303</span> <span class="kwdt-detail">POST @book_create (${postToken})</span></a>`, 'the toolbar: "Redirect from POST @book_create (token)", linking the POST\'s profile')
  const panel = await app.inject({ url: `/_profiler/${profile.token}?panel=request`, headers: { host } })
  t.match(panel.body, `303 POST @book_create (${postToken})`, 'the request panel says it too')

  // a request with no redirect behind it shows none
  const plain = await app.kernelProfiler.profileOf(await app.inject({ url: '/books/2', headers: { host } }))
  t.equal(plain.collected.request?.redirect, undefined)
  t.notMatch((await app.inject({ url: `/_wdt/${plain.token}`, headers: { host } })).body, 'Redirect from')
})

t.test('a redirect cookie a client made up: a wrong shape is ignored, what reaches the page is escaped, never a 500', async (t) => {
  const app = await bookApp()
  t.teardown(() => app.close())
  const value = (fields: Record<string, unknown>): string => `kernel_redirect=${encodeURIComponent(JSON.stringify({ token: 'abcdef', method: 'POST', route: 'r', statusCode: 303, ...fields }))}`
  const ignored = [
    'kernel_redirect=not-json',
    'kernel_redirect=%7B%7D',
    value({ token: '../etc' }),
    value({ method: '<b>' }),
    value({ statusCode: 200 }),
    value({ route: 'x'.repeat(201) }),
    value({ route: 7 })
  ]
  for (const cookie of ignored) {
    const res = await app.inject({ url: '/books/1', headers: { host, cookie } })
    t.equal(res.statusCode, 200, cookie.slice(0, 40))
    t.equal((await app.kernelProfiler.profileOf(res)).collected.request?.redirect, undefined, `not a redirect: ${cookie.slice(0, 40)}`)
  }
  const hostile = await app.inject({ url: '/books/1', headers: { host, cookie: value({ route: '<img src=x onerror=alert(1)>' }) } })
  const token = String(hostile.headers['x-debug-token'])
  await app.kernelProfiler.profileOf(hostile)
  for (const url of [`/_wdt/${token}`, `/_profiler/${token}?panel=request`]) {
    const page = await app.inject({ url, headers: { host } })
    t.equal(page.statusCode, 200)
    t.notMatch(page.body, '<img src=x', `${url}: escaped`)
    t.match(page.body, '@&lt;img src&#x3D;x onerror&#x3D;alert(1)&gt;')
  }
})

t.test('a redirect that follows a redirect names the one before it; a 201 with a Location is no redirect a browser follows', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/old', { config: { name: 'old' } }, async (_request, reply) => reply.redirect('/new', 301))
    app.post('/api/books', async (_request, reply) => reply.code(201).header('location', '/api/books/1').send({ id: 1 }))
  })
  t.teardown(() => app.close())
  const old = await app.inject({ url: '/old', headers: { host } })
  const cookie = cookies(old.headers['set-cookie']).find((c) => c.startsWith('kernel_redirect='))!.split(';')[0]
  const chained = await app.inject({ url: '/old', headers: { host, cookie } })
  const set = cookies(chained.headers['set-cookie'])
  t.equal(set.length, 1, 'one Set-Cookie: the new redirect\'s, not a clear beside it')
  t.match(set[0], `kernel_redirect=${encodeURIComponent(JSON.stringify({ token: String(chained.headers['x-debug-token']), method: 'GET', route: 'old', statusCode: 301 }))}`)
  t.equal((await app.kernelProfiler.profileOf(chained)).collected.request?.redirect?.token, String(old.headers['x-debug-token']), 'and its profile names the one before')
  const created = await app.inject({ method: 'POST', url: '/api/books', headers: { host } })
  t.equal(created.headers['set-cookie'], undefined, 'a 201: no redirect cookie')
})
