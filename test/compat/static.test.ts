/**
 * @fastify/static with the kernel: its files served, its `redirect` option obeyed (the kernel
 * never redirects to a wildcard's empty tail), and a missing file is the static route's own 404,
 * not the router's "No routes found" (a route matched). A route can opt out of the slash redirect.
 */
import t from 'tap'
import Fastify from 'fastify'
import type { FastifyInstance } from 'fastify'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fastifyStatic from '@fastify/static'
import sensible from '@fastify/sensible'
import kernel, { kernelServerOptions } from '../../index.js'
import { withoutExcerpts } from '../helpers.js'

const host = 'example.test'
const json = { host, accept: 'application/json' }
const root = mkdtempSync(join(tmpdir(), 'kernel-static-'))
t.teardown(() => rmSync(root, { recursive: true, force: true }))
mkdirSync(join(root, 'css'))
writeFileSync(join(root, 'app.css'), 'body { color: red }')
writeFileSync(join(root, 'index.html'), '<html><body>index</body></html>')
writeFileSync(join(root, 'css', 'site.css'), 'p {}')

async function build (order: 'kernel first' | 'kernel last', debug: boolean, redirect: boolean): Promise<FastifyInstance> {
  const app = Fastify(kernelServerOptions())
  if (order === 'kernel first') await app.register(kernel, { debug, profiler: false })
  await app.register(fastifyStatic, { root, prefix: '/public', redirect })
  await app.register(sensible)
  if (order === 'kernel last') await app.register(kernel, { debug, profiler: false })
  app.get('/docs/', { config: { trailingSlashRedirect: false } }, async () => 'docs')
  app.get('/blog/', async () => 'blog')
  app.get('/gone', async (_request, reply) => reply.notFound())
  app.get('/delegated', async (_request, reply) => reply.callNotFound())
  await app.ready()
  return app
}

for (const order of ['kernel first', 'kernel last'] as const) {
  for (const debug of [true, false]) {
    t.test(`${order}, debug ${debug}: @fastify/static with redirect: false`, async (t) => {
      const app = await build(order, debug, false)
      t.teardown(() => app.close())
      const file = await app.inject({ url: '/public/app.css', headers: { host } })
      t.equal(file.statusCode, 200)
      t.equal(file.body, 'body { color: red }', 'static\'s own feature: the file')
      t.match((await app.inject({ url: '/public/', headers: { host } })).body, 'index', 'and the index')
      const bare = await app.inject({ url: '/public', headers: json })
      t.equal(bare.statusCode, 404, 'redirect: false is obeyed: no 301 to the wildcard')
      if (debug) t.equal(bare.json().detail, 'No route found for "GET http://example.test/public"')
      for (const url of ['/public/missing.css', '/gone', '/delegated']) {
        const missing = await app.inject({ url, headers: json })
        t.equal(missing.statusCode, 404, url)
        t.equal(missing.json().detail, 'Not Found', `${url}: the handler's 404, not the router's`)
        if (debug) t.notMatch(JSON.stringify(missing.json()), 'No routes found', `${url}: no router cause`)
        const page = await app.inject({ url, headers: { host, accept: 'text/html' } })
        t.equal(page.statusCode, 404)
        t.notMatch(withoutExcerpts(page.body), 'No routes found', `${url}: the page names no router cause`)
      }
      const blog = await app.inject({ url: '/blog', headers: json })
      t.equal(blog.statusCode, 301, 'other routes keep Symfony\'s redirect')
      const docs = await app.inject({ url: '/docs', headers: json })
      t.equal(docs.statusCode, 404, 'config.trailingSlashRedirect: false')
      if (debug) t.equal(docs.json().detail, 'No route found for "GET http://example.test/docs"')
    })
  }
  t.test(`${order}: @fastify/static's own redirect: true`, async (t) => {
    const app = await build(order, false, true)
    t.teardown(() => app.close())
    const bare = await app.inject({ url: '/public', headers: json })
    t.equal(bare.statusCode, 301)
    t.equal(bare.headers.location, '/public/', 'static\'s own redirect')
    t.equal((await app.inject({ url: '/public/css', headers: json })).headers.location, '/public/css/', 'a folder redirect, static\'s own')
  })
}
