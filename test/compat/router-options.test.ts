/**
 * Every combination of Fastify's router options starts, with debug on and off (the profiler's
 * own routes included), and keeps the kernel's exact answers: what the options make Fastify
 * serve is served, every other request gets Symfony's 404 / 405 / 301.
 */
import t from 'tap'
import Fastify from 'fastify'
import kernel, { kernelServerOptions } from '../../index.js'

const host = 'example.test'
const json = { host, accept: 'application/json' }

interface Combination { ignoreTrailingSlash: boolean, ignoreDuplicateSlashes: boolean, caseInsensitive: boolean, noHeadRoutes: boolean }

const combinations: Combination[] = []
for (let mask = 0; mask < 16; mask++) {
  combinations.push({ ignoreTrailingSlash: (mask & 1) !== 0, ignoreDuplicateSlashes: (mask & 2) !== 0, caseInsensitive: (mask & 4) !== 0, noHeadRoutes: (mask & 8) !== 0 })
}

for (const c of combinations) {
  for (const debug of [true, false]) {
    const name = Object.entries(c).filter(([, on]) => on).map(([option]) => option).join(', ') || 'defaults'
    t.test(`${name}, debug ${debug}`, async (t) => {
      const base = kernelServerOptions()
      const app = Fastify({
        ...base,
        exposeHeadRoutes: !c.noHeadRoutes,
        routerOptions: { ...base.routerOptions, ignoreTrailingSlash: c.ignoreTrailingSlash, ignoreDuplicateSlashes: c.ignoreDuplicateSlashes, caseSensitive: !c.caseInsensitive }
      })
      t.teardown(() => app.close())
      await app.register(kernel, { debug })
      app.get('/blog/', async () => 'blog')
      app.route({ method: ['GET', 'POST'], url: '/about', handler: async () => 'about' })
      await app.ready()

      const miss = await app.inject({ url: '/nope', headers: json })
      t.equal(miss.statusCode, 404)
      t.equal(miss.json().detail, debug ? 'No route found for "GET http://example.test/nope"' : 'Not Found')
      const put = await app.inject({ method: 'PUT', url: '/about', headers: json })
      t.equal(put.statusCode, 405)
      t.equal(put.headers.allow, 'GET, POST')
      const slash = await app.inject({ url: '/blog?page=2', headers: json })
      if (c.ignoreTrailingSlash) t.equal(slash.body, 'blog', 'ignoreTrailingSlash: Fastify serves /blog')
      else t.equal(slash.headers.location, 'http://example.test/blog/?page=2', 'the trailing-slash redirect')
      const upper = await app.inject({ url: '/ABOUT', headers: json })
      if (c.caseInsensitive) t.equal(upper.body, 'about', 'caseSensitive: false: served')
      else t.equal(upper.statusCode, 404, 'case-sensitive: a 404')
      const doubled = await app.inject({ url: '//about', headers: json })
      if (c.ignoreDuplicateSlashes) t.equal(doubled.body, 'about', 'ignoreDuplicateSlashes: served')
      else t.equal(doubled.statusCode, 404)
      const head = await app.inject({ method: 'HEAD', url: '/about', headers: json })
      t.equal(head.statusCode, c.noHeadRoutes ? 404 : 200, 'HEAD as Fastify serves it')

      const page = await app.inject({ url: '/about', headers: { host } })
      if (!debug) {
        t.equal((await app.inject({ url: '/_profiler/', headers: json })).statusCode, 404, 'no profiler in production')
        return
      }
      const token = String(page.headers['x-debug-token'])
      t.match(token, /^[0-9a-f]{6}$/)
      t.equal((await app.inject({ url: `/_profiler/${token}`, headers: { host } })).statusCode, 200, 'the profile page')
      t.equal((await app.inject({ url: '/_profiler/', headers: { host } })).statusCode, 200, 'the search page')
      t.equal((await app.inject({ url: `/_wdt/${token}`, headers: { host } })).statusCode, 200, 'the toolbar')
      const home = await app.inject({ url: '/_profiler', headers: { host } })
      if (c.ignoreTrailingSlash) t.equal(home.statusCode, 200, '/_profiler is the search page')
      else t.equal(home.headers.location, 'http://example.test/_profiler/')
      const tokenSlash = await app.inject({ url: `/_profiler/${token}/`, headers: { host } })
      if (c.ignoreTrailingSlash) t.equal(tokenSlash.statusCode, 200)
      else t.equal(tokenSlash.headers.location, `http://example.test/_profiler/${token}`)
    })
  }
}
