/**
 * "Latest" is the page just viewed, not the browser's own requests (favicon, source maps, static
 * assets), which the search page still lists; the search page filters by status, method, URL,
 * minimum time, minimum SQL statements and likely N+1, in each storage (memory, file, Redis),
 * older stored profiles readable; bad input is said on the page, never a 500.
 */
import t from 'tap'
import type { Test } from 'tap'
import { tracingChannel } from 'node:diagnostics_channel'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import type { FastifyInstance } from 'fastify'
import { createKernelApp } from '../../index.js'
import type { KernelOptions } from '../../index.js'
import { isBrowserOwnRequest } from '../../src/profiler/browser-requests.js'
import { FileProfileStorage } from '../../src/profiler/storage/file.js'
import { RedisProfileStorage } from '../../src/profiler/storage/redis.js'
import type { ProfileStorage } from '../../src/profiler/storage/storage.js'
import { MemoryProfileStorage } from '../../src/profiler/storage/memory.js'
import type { Profile } from '../../src/profiler/profile.js'
import { fakeProfileMaker, page, profiled } from './helpers.js'
import { profilerOf } from '../helpers.js'
import { TestRedis } from '../redis/server.js'

const sql = tracingChannel<unknown, { query: string, values?: unknown[] }>('fastify-kernel:db:query')
/** a statement published on the kernel's channel, as a driver the app wires does */
const statement = (query: string, values?: unknown[]): void => { sql.traceSync(() => [], values === undefined ? { query } : { query, values }) }

const redis = await TestRedis.start(t)

/** An app whose routes make 0, 2 or 4 statements (the last 3 of one shape: a likely N+1), and the browser's own requests. */
async function app (t: Test, profiler: KernelOptions['profiler'] = { storage: 'memory' }): Promise<FastifyInstance> {
  const server = await createKernelApp({ kernel: { debug: true, profiler } })
  server.get('/page', async () => {
    statement('SELECT 1')
    statement('SELECT 2')
    return 'page'
  })
  server.get('/books', async () => {
    statement('SELECT COUNT(*) FROM books')
    for (const id of [1, 2, 3]) statement('SELECT * FROM books WHERE id = ?', [id])
    return 'books'
  })
  server.get('/plain', async () => 'plain')
  for (const asset of ['/favicon.ico', '/app.js.map', '/assets/site.css', '/assets/app.js', '/img/logo.png', '/fonts/a.woff2', '/.well-known/appspecific/com.chrome.devtools.json']) {
    server.get(asset, async (_request, reply) => reply.code(404).send())
  }
  t.teardown(() => server.close())
  return server
}

const tokensOf = (html: string): string[] => [...html.matchAll(/<a href="\/_profiler\/([0-9a-f]{6})">/g)].map((m) => m[1]!)

t.test('the browser\'s own requests, by their path', async (t) => {
  for (const url of ['http://h/favicon.ico', 'http://h/app.js.map', 'http://h/x/site.CSS?v=3', 'http://h/a.mjs', 'http://h/i.jpeg', 'http://h/f.woff', 'http://h/f.woff2', 'http://h/site.webmanifest', 'http://h/apple-touch-icon-precomposed.png', 'http://h/.well-known/appspecific/com.chrome.devtools.json', '/%66avicon.ico']) {
    t.ok(isBrowserOwnRequest(url), url)
  }
  for (const url of ['http://h/', 'http://h/books', 'http://h/api/data.json', 'http://h/favicon.ico/page', 'http://h/search?q=a.css', 'http://h/download.pdf']) {
    t.notOk(isBrowserOwnRequest(url), url)
  }
})

for (const kind of ['memory', 'file', 'redis'] as const) {
  t.test(`${kind} storage: latest skips the browser's own requests; the search page lists them and filters by status, method, URL, time, statements and N+1`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'kernel-search-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    let client: Redis | undefined
    if (kind === 'redis') {
      client = new Redis(redis.port, '127.0.0.1', { lazyConnect: true })
      await client.connect()
      t.teardown(() => { client!.disconnect() })
    }
    const options = kind === 'memory' ? { storage: 'memory' as const } : kind === 'file' ? { storage: 'file' as const, directory: dir } : { storage: 'redis' as const, redis: { client: client!, prefix: `search-${process.pid}:{profiler}:` } }
    const server = await app(t, options)
    const viewed = await profiled(server, { url: '/page' })
    const books = await profiled(server, { url: '/books' })
    const plain = await profiled(server, { method: 'POST', url: '/plain' })
    const assets = []
    for (const asset of ['/favicon.ico', '/app.js.map', '/assets/site.css', '/img/logo.png', '/.well-known/appspecific/com.chrome.devtools.json']) assets.push(await profiled(server, { url: asset }))

    const latest = await page(server, '/_profiler/latest')
    t.match(latest.body, `<b id="token">${plain.token}</b>`, 'latest: the newest page, after which the browser asked for its icon, a source map and assets')
    t.same(plain.profile.figures?.db?.statements, 0)
    t.same(viewed.profile.figures?.db?.statements, 2, 'the summary counts the app\'s statements, as the Database panel\'s figure')
    t.same(books.profile.figures?.db?.statements, 4)
    t.same(Object.keys(books.profile.figures!).filter((panel) => books.profile.figures![panel]!.nPlusOne === true), ['db'], 'the Database panel flagged a likely N+1, and no other')

    const all = tokensOf((await page(server, '/_profiler/')).body)
    t.same(all, [...assets.map((a) => a.token).reverse(), plain.token, books.token, viewed.token], 'the search page lists everything, newest first')
    const find = async (query: string): Promise<string[]> => {
      const res = await page(server, `/_profiler/?${query}`)
      t.equal(res.statusCode, 200, query)
      t.notMatch(res.body, 'id="search-problems"', `${query}: no problem`)
      return tokensOf(res.body)
    }
    t.same(await find('min_statements=1'), [books.token, viewed.token])
    t.same(await find('min_statements=3'), [books.token])
    t.same(await find('min_statements=0&method=POST'), [plain.token])
    t.same(await find('n_plus_one=1'), [books.token])
    t.same(await find('status=404&url=favicon'), [assets[0]!.token])
    t.same(await find('status=4xx&url=.map'), [assets[1]!.token])
    const everything = [viewed, books, plain, ...assets]
    const longest = Math.max(viewed.profile.duration, books.profile.duration, plain.profile.duration)
    const expected = everything.filter((p) => p.profile.duration >= longest).map((p) => p.token)
    t.same((await find(`min_duration=${longest}`)).sort(), expected.sort(), 'at least that long, by the stored durations')
    t.same(await find('min_duration=100000'), [])

    // a console command's outcome, searched by it: a failed one is no 5xx
    const command = async (fail: boolean): Promise<string> => {
      let token = ''
      await server.kernelProfiler.record({ kind: 'command', name: fail ? 'mail:send' : 'cache:warm' }, async () => {
        token = profilerOf(server).currentToken()!
        if (fail) throw new Error('the SMTP server said no')
      }).catch(() => undefined)
      await server.kernelProfiler.settled()
      return token
    }
    const failed = await command(true)
    const ok = await command(false)
    t.same(await find('status=failed'), [failed], 'status=failed: the command that failed')
    t.same(await find('status=FAILED&kind=command'), [failed])
    t.same(await find('status=ok&kind=command'), [ok], 'status=ok: the one that completed')
    t.same(await find('status=5xx'), [], 'a failed command is no HTTP 5xx')
    t.same((await find('status=ok')).includes(viewed.token), true, 'a request answered 200 is ok')
    const listed = (await page(server, '/_profiler/')).body
    t.match(listed, `${all.length + 2} shown, ${all.length + 2} stored.`, 'as many stored as shown')
    t.match(listed, new RegExp(`<a href="/_profiler/${failed}">${failed}</a></td><td>command</td><td>COMMAND</td><td class="mono">[^<]*</td><td><span class="status status-error">failed</span>`), 'the command\'s outcome, not a status')

    const results = (await page(server, '/_profiler/?n_plus_one=1')).body
    t.match(results, /<td data-statements>4<\/td><td><span class="flag" data-n-plus-one>database<\/span><\/td>/, 'the results say how many statements, and which panel saw an N+1')
    t.match(results, /<input type="checkbox" name="n_plus_one" value="1" checked \/>/, 'the form keeps the filter')
  })
}

t.test('older profiles are read and listed: those before figures match no filter on them, those of the previous format (figures at the top) are read as the panels\' figures', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kernel-search-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const quiet = { warn: () => undefined }
  const client = new Redis(redis.port, '127.0.0.1', { lazyConnect: true })
  await client.connect()
  t.teardown(() => { client.disconnect() })
  const fake = fakeProfileMaker(0x300000)
  const memory = new MemoryProfileStorage({ maxProfiles: 10, maxAgeMs: 60_000, maxBytes: 1024 * 1024 })
  for (const open of [
    async () => await FileProfileStorage.open(dir, { maxProfiles: 10, maxAgeMs: 60_000 }, quiet),
    async () => await RedisProfileStorage.open({ client, prefix: `older-${process.pid}:{profiler}:`, maxProfiles: 10, maxAgeMs: 60_000, log: quiet }),
    // the memory storage keeps what it was given: a profile saved in the previous format stays so until read
    async () => memory
  ]) {
    let store: ProfileStorage = await open()
    const older = fake({ token: store.reserveToken()! })
    await store.save(older)
    // the previous format: the Database panel's count and the N+1 panels at the summary's top
    const previous = fake({ token: store.reserveToken()!, statements: 7, nPlusOne: ['cache'] } as Partial<Profile>)
    await store.save(previous)
    const newer = fake({ token: store.reserveToken()!, figures: { db: { statements: 2, nPlusOne: false }, cache: { nPlusOne: false } } })
    await store.save(newer)
    if (store !== memory) {
      await store.close()
      // read back from disk or Redis, as another process (or a restart) reads them
      store = await open()
    }
    t.same((await store.find()).map((s) => s.token).sort(), [older.token, previous.token, newer.token].sort(), `${store.kind}: all listed`)
    t.same(await store.load(older.token), older, `${store.kind}: the older one is readable`)
    const { statements: _s, nPlusOne: _n, ...rest } = previous as Profile & { statements?: number, nPlusOne?: string[] }
    t.same(await store.load(previous.token), { ...rest, figures: { db: { statements: 7 }, cache: { nPlusOne: true } } }, `${store.kind}: the previous format read in this one`)
    t.same((await store.find()).find((s) => s.token === previous.token)?.figures, { db: { statements: 7 }, cache: { nPlusOne: true } }, `${store.kind}: its summary too`)
    t.same((await store.find({ figures: [{ panel: 'db', figure: 'statements', min: 0 }] })).map((s) => s.token).sort(), [previous.token, newer.token].sort(), `${store.kind}: a statements filter matches the previous format and the newer, not the older`)
    t.same((await store.find({ figures: [{ panel: 'db', figure: 'statements', min: 3 }] })).map((s) => s.token), [previous.token])
    t.same((await store.find({ figures: [{ figure: 'nPlusOne' }] })).map((s) => s.token), [previous.token], `${store.kind}: any panel's N+1 flag`)
    t.same((await store.find({ figures: [{ panel: 'db', figure: 'nPlusOne' }] })).map((s) => s.token), [], 'the Database panel\'s own flag: none')
    await store.purge()
    await store.close()
  }
})

t.test('bad filters: a clear message on the page, escaped, the filter not applied; never a 500', async (t) => {
  const server = await app(t)
  const viewed = await profiled(server, { url: '/page' })
  const res = await page(server, '/_profiler/?status=<script>alert(1)</script>&method=G%20T&min_duration=-3&min_statements=1.5&limit=0&start=yesterday&end=%3Cb%3E')
  t.equal(res.statusCode, 200)
  t.notMatch(res.body, '<script>alert(1)</script>', 'nothing echoed raw')
  const problems = /<div class="card" id="search-problems">([\s\S]*?)<\/div>\n/.exec(res.body)?.[1] ?? ''
  t.match(problems, 'Status &quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot; is not a status (404), a class (4xx) nor an outcome (failed, ok): not applied.')
  t.match(problems, 'Method &quot;G T&quot; is not an HTTP method: not applied.')
  t.match(problems, 'Minimum time &quot;-3&quot; is not a number of 0 or more: not applied.')
  t.match(problems, 'Minimum SQL statements &quot;1.5&quot; is not a whole number of 0 or more: not applied.')
  t.match(problems, 'Limit &quot;0&quot; is not a whole number above 0: 50 shown.')
  t.match(problems, 'From &quot;yesterday&quot; is not a date and time: not applied.')
  t.match(problems, 'Until &quot;&lt;b&gt;&quot; is not a date and time: not applied.')
  t.same(tokensOf(res.body), [viewed.token], 'the other filters still apply (none here)')
  t.match(res.body, 'value="&lt;script&gt;alert(1)&lt;/script&gt;"', 'the form keeps what was typed, escaped')
})

t.test('Symfony\'s search URLs: /_profiler/search redirects to the token\'s profile or to the results of its filters, as its searchAction', async (t) => {
  const server = await app(t)
  const viewed = await profiled(server, { url: '/page' })
  const books = await profiled(server, { url: '/books' })
  const missing = await profiled(server, { url: '/favicon.ico' })
  const redirected = async (url: string): Promise<string> => {
    const res = await page(server, url)
    t.equal(res.statusCode, 302, `${url}: a 302, as Symfony's RedirectResponse`)
    t.match(res.headers['content-type'], /^text\/html/)
    t.notOk('x-debug-token' in res.headers, `${url}: not profiled, as Symfony disables the profiler there`)
    t.notMatch(res.body, 'not found')
    return String(res.headers.location)
  }
  t.equal(await redirected(`/_profiler/search?ip=&method=&status_code=&url=&start=&end=&limit=10&token=${books.token}&type=request`), `/_profiler/${books.token}`, 'a token: its profile')
  t.equal((await page(server, `/_profiler/${books.token}`)).statusCode, 200)
  // Symfony's search bar sends every field, empty ones too
  const location = await redirected('/_profiler/search?ip=&method=GET&status_code=404&url=favicon&start=&end=&limit=10&token=&type=request')
  t.equal(location, '/_profiler/?method=GET&status=404&url=favicon&limit=10&kind=request', 'the filters, by the search page\'s names')
  t.same(tokensOf((await page(server, location)).body), [missing.token], 'the results')
  t.equal(await redirected('/_profiler/search'), '/_profiler/', 'no filter: every profile')
  t.equal(await redirected('/_profiler/search?min_statements=3&n_plus_one=1&bogus=1'), '/_profiler/?min_statements=3&n_plus_one=1', 'the page\'s own names pass, others do not')
  t.same(tokensOf((await page(server, '/_profiler/?min_statements=3&n_plus_one=1')).body), [books.token])
  t.equal(await redirected('/_profiler/empty/search/results?limit=10&status_code=200'), '/_profiler/?limit=10&status=200', 'Symfony\'s results URL (its home redirects there)')
  const odd = await redirected('/_profiler/search?url=%3Cscript%3E&status_code=abc')
  t.equal(odd, '/_profiler/?url=%3Cscript%3E&status=abc', 'encoded')
  const results = await page(server, odd)
  t.equal(results.statusCode, 200, 'a filter the page cannot read is said, never a 500')
  t.match(results.body, 'Status &quot;abc&quot; is not a status (404), a class (4xx) nor an outcome (failed, ok): not applied.')
  t.notMatch(results.body, '<script>')
  t.ok(viewed.token)
})
