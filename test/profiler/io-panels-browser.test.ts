/**
 * The Cache, Templates and HTTP Client panels in a real browser (Debian's chromium), with a real
 * redis-server, @fastify/view + handlebars and a local upstream: they render, origins are editor
 * links, "Copy as cURL" puts the command on the clipboard under the app's strict CSP, hostile
 * values stay text. Screenshots in test/artifacts (UPDATE_README_IMAGES=1 copies them to docs/images).
 */
import t from 'tap'
import { copyFileSync, mkdirSync } from 'node:fs'
import { once } from 'node:events'
import { createServer } from 'node:http'
import { join, resolve } from 'node:path'
import helmet from '@fastify/helmet'
import view from '@fastify/view'
import Handlebars from 'handlebars'
import { Redis } from 'ioredis'
import type { Page } from 'playwright-core'
import { buildApp } from '../helpers.js'
import { chromiumAvailable, launchChromium } from '../chromium.js'
import { TestRedis } from '../redis/server.js'

const artifacts = resolve(import.meta.dirname, '../artifacts')
const readmeImages = resolve(import.meta.dirname, '../../docs/images')
const views = join(import.meta.dirname, 'fixtures/views')
const HOSTILE = '<img src=x onerror="window.__pwned=1">'

async function shoot (page: Page, name: string): Promise<void> {
  const path = join(artifacts, name)
  await page.screenshot({ path, fullPage: true })
  if (process.env.UPDATE_README_IMAGES === '1') {
    mkdirSync(readmeImages, { recursive: true })
    copyFileSync(path, join(readmeImages, name))
  }
}

if (chromiumAvailable(t)) {
  t.test('Cache, Templates and HTTP Client panels in a browser: origins, hits and misses, nested partials, bodies, copy as cURL', async (t) => {
    mkdirSync(artifacts, { recursive: true })
    const redis = await TestRedis.start(t)
    const client = new Redis(redis.port, '127.0.0.1', { lazyConnect: true })
    await client.connect()
    t.teardown(() => { client.disconnect() })
    await client.set('book:1:title', 'Dune')
    const upstream = createServer((request, response) => {
      response.setHeader('content-type', 'application/json')
      response.end(JSON.stringify({ id: request.url, title: HOSTILE, api_token: 'tok-123' }))
    })
    upstream.listen(0, '127.0.0.1')
    await once(upstream, 'listening')
    t.teardown(() => { upstream.close() })
    const api = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`

    const app = await buildApp({ debug: true, fileLinkFormat: 'vscode' }, { pluginTimeout: 120_000 }, (app) => {
      app.register(helmet)
      app.get('/favicon.ico', async (_request, reply) => reply.code(204).send())
      app.register(view, { engine: { handlebars: Handlebars.create() }, root: views, options: { partials: { 'book-row': 'partials/book-row.hbs', price: 'partials/price.hbs', nav: 'partials/nav.hbs' } } })
      app.get('/books', { config: { name: 'book_list' } }, async (_request, reply) => {
        const books = []
        for (const id of [1, 2, 3]) {
          const cached = await client.get(`book:${id}:title`)
          const title = cached ?? (await (await fetch(`${api}/books/${id}`, { headers: { authorization: 'Bearer s3cr3t' } })).json() as { title: string }).title
          books.push({ title, price: id * 3 })
        }
        await client.mget('book:1:title', 'book:9:title')
        return reply.view('books.hbs', { books }, { layout: 'shop-layout.hbs' })
      })
    })
    t.teardown(() => app.close())
    await app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`

    const browser = await launchChromium(t)
    if (browser === undefined) return
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
    const page = await context.newPage()
    const problems: string[] = []
    page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()) })
    page.on('pageerror', (error) => { problems.push(error.message) })

    const opened = await page.goto(`${base}/books`)
    const token = (await opened!.allHeaders())['x-debug-token']
    await page.waitForSelector('.kwdt [data-kwdt="cache"]')
    t.equal((await page.textContent('[data-kwdt-hit-ratio]'))?.trim(), '40 % hits', 'the toolbar item\'s hit ratio: 2 of 5 keys found')

    // the Cache panel
    await page.goto(`${base}/_profiler/${token}?panel=cache`)
    t.equal((await page.textContent('[data-hit-ratio]'))?.trim(), '40 %')
    t.match(await page.textContent('#cache-n-plus-one') ?? '', 'GET book:{id}:title', 'three GETs of one key shape: a likely N+1')
    const origin = page.locator('#cache-commands [data-origin] a').first()
    t.match(await origin.getAttribute('href'), /^vscode:\/\/file\/.+io-panels-browser\.test\.ts:\d+$/, 'where the app sent it, an editor link')
    t.match(await origin.textContent(), /^test\/profiler\/io-panels-browser\.test\.ts:\d+$/)
    await shoot(page, 'profiler-cache.png')

    // the Templates panel
    await page.click('#menu a[data-panel="templates"]')
    await page.waitForURL(/panel=templates/)
    const runs = await page.locator('table.runs tbody tr').evaluateAll((rows) => rows.map((row) => `${row.className}:${row.querySelector('td')?.textContent ?? ''}`))
    t.same(runs, ['run d0:books.hbs', 'run d1:book-row', 'run d2:price', 'run d0:shop-layout.hbs', 'run d1:nav'], 'the page, its partials nested, the layout and its own')
    const indent = await page.locator('table.runs tr.run.d2 td').first().evaluate((cell) => getComputedStyle(cell).paddingLeft)
    t.equal(indent, '48px', 'a partial\'s partial is indented twice')
    await shoot(page, 'profiler-templates.png')

    // the HTTP Client panel
    await page.click('#menu a[data-panel="http_client"]')
    await page.waitForURL(/panel=http_client/)
    t.equal(await page.locator('#http-calls tbody tr[data-call]').count(), 2)
    await page.click('#http-calls tr[data-call="1"] details.headers:not(.curl) summary')
    const body = await page.textContent('#http-calls tr[data-call="1"] [data-body="response"] pre')
    t.match(body, '"title": "<img src=x onerror=', 'the hostile title is text')
    t.match(body, '"api_token": "******"', 'the secret masked')
    await page.click('#http-calls tr[data-call="1"] details.curl summary')
    await page.click('#http-calls tr[data-call="1"] button[data-copy-from]')
    await page.waitForSelector('[data-copied="curl-1"]:not([hidden])')
    const copied = await page.evaluate(async () => await navigator.clipboard.readText())
    t.equal(copied, await page.textContent('#curl-1'), 'the command is on the clipboard')
    t.match(copied, `curl '${api}/books/2' -H 'authorization: ******'`, 'with its secret masked')
    await shoot(page, 'profiler-http-client.png')

    t.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined, 'no hostile value ran')
    t.same(problems, [], 'no console errors (the pages\' script ran under helmet\'s policy)')
  })
}
