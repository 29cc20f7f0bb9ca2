/**
 * The timeline, templates, dump and configuration panels in a real browser (Debian's chromium):
 * each renders, the toolbar items show their counts, and a hostile SQL string, URL and dumped
 * value stay text.
 */
import t from 'tap'
import { copyFileSync, mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import view from '@fastify/view'
import Handlebars from 'handlebars'
import type { Page } from 'playwright-core'
import { buildApp } from '../helpers.js'
import { chromiumAvailable, launchChromium } from '../chromium.js'
import { dump } from '../../index.js'
import { startSpan } from '../../src/profiler/spans.js'

const artifacts = resolve(import.meta.dirname, '../artifacts')
// UPDATE_README_IMAGES=1 also copies the screenshots the README shows to docs/images/
const readmeImages = resolve(import.meta.dirname, '../../docs/images')

const HOSTILE_SQL = 'SELECT * FROM users WHERE name = \'<img src=x onerror="window.__pwned=1">\''
const HOSTILE_URL = 'GET http://api.example/search?q=<script>window.__pwned=2</script>&api_key=k-123'
const HOSTILE_DUMP = '<script>window.__pwned=3</script>'

async function shoot (page: Page, name: string, readmeName?: string, clip?: { x: number, y: number, width: number, height: number }): Promise<void> {
  const path = join(artifacts, name)
  await page.screenshot(clip === undefined ? { path, fullPage: true } : { path, clip })
  if (readmeName !== undefined && process.env.UPDATE_README_IMAGES === '1') {
    mkdirSync(readmeImages, { recursive: true })
    copyFileSync(path, join(readmeImages, readmeName))
  }
}

if (chromiumAvailable(t)) {
  t.test('the app\'s panels in a browser: timeline, templates, dumps, configuration; toolbar counts; hostile values stay text', async (t) => {
    mkdirSync(artifacts, { recursive: true })
    const app = await buildApp({ debug: true }, { pluginTimeout: 120_000 }, (app) => {
      app.register(view, { engine: { handlebars: Handlebars.create() }, root: join(import.meta.dirname, 'fixtures/views') })
      app.get('/favicon.ico', async (_request, reply) => reply.code(204).send())
      app.get('/orders', { config: { name: 'order_list' } }, async (request, reply) => {
        const stopwatch = request.kernel!.stopwatch
        stopwatch.start('load orders', 'domain')
        const http = startSpan('http_client', HOSTILE_URL, { method: 'GET' })
        await new Promise((resolve) => setTimeout(resolve, 4))
        http.end({ status: 200 })
        for (let i = 0; i < 3; i++) startSpan('db', HOSTILE_SQL, { system: 'mysql' }).end({ rows: 1 })
        startSpan('cache', 'GET orders:open', { command: 'GET' }).end()
        stopwatch.lap('load orders')
        performance.mark('pricing')
        await new Promise((resolve) => setTimeout(resolve, 2))
        performance.measure('pricing', 'pricing')
        stopwatch.stop('load orders')
        dump({ orders: [{ id: 1, total: 42.5, lines: [{ sku: 'A-1', qty: 2 }] }], customer: { name: 'Ada', tier: 'gold' } }, 'orders')
        dump(HOSTILE_DUMP, 'hostile')
        const items = await Promise.all(['A-1', 'B-2'].map((name) => reply.viewAsync('item.hbs', { name })))
        return reply.view('page.hbs', { greeting: `${items.length} orders` }, { layout: 'layout.hbs' })
      })
    })
    t.teardown(() => app.close())
    await app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`

    const browser = await launchChromium(t)
    if (browser === undefined) return
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    const problems: string[] = []
    page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()) })
    page.on('pageerror', (error) => { problems.push(error.message) })

    // the page and its toolbar
    await page.goto(`${base}/orders`)
    await page.waitForSelector('.kwdt [data-kwdt="templates"]')
    t.equal((await page.textContent('[data-kwdt-templates]'))?.trim(), '3', 'the toolbar counts the renders')
    t.equal((await page.textContent('[data-kwdt-dumps]'))?.trim(), '2', 'and the dumps')
    t.match(await page.textContent('.kwdt [data-kwdt="time"]') ?? '', /\d+\.\d ms/)
    await page.hover('.kwdt [data-kwdt="dump"]')
    const dumpInfo = page.locator('.kwdt [data-kwdt="dump"] .kwdt-info')
    await dumpInfo.waitFor({ state: 'visible' })
    t.match(await dumpInfo.textContent() ?? '', HOSTILE_DUMP, 'a dump is text in the toolbar')
    await shoot(page, 'toolbar-panels.png', 'toolbar-panels.png', { x: 0, y: 620, width: 1280, height: 180 })
    const token = await page.getAttribute('.kwdt-bar', 'data-kwdt-token')
    t.ok(token !== null)

    // the timeline
    await page.goto(`${base}/_profiler/${token!}?panel=time`)
    t.equal(await page.getAttribute('#panel', 'data-panel'), 'time')
    const kinds = await page.locator('#timeline .wf-row').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-kind')))
    for (const kind of ['stage', 'listener', 'controller', 'http_client', 'db', 'cache', 'template', 'app', 'measure']) t.ok(kinds.includes(kind), `a ${kind} row`)
    const boxes = await Promise.all((await page.locator('#timeline .wf-row[data-kind="db"] .bar, #timeline .wf-row[data-kind="template"] .bar, #timeline .wf-row[data-kind="app"] .bar').all()).map((bar) => bar.boundingBox()))
    t.ok(boxes.length >= 5 && boxes.every((box) => box !== null && box.width > 0), 'span bars are drawn')
    const labels = await page.locator('#timeline .wf-row[data-kind="db"] .label').allTextContents()
    t.ok(labels.every((label) => label.includes('<img src=x onerror="window.__pwned=1">')), 'the hostile statement is shown as text')
    const http = await page.locator('#timeline .wf-row[data-kind="http_client"] .label').textContent()
    t.match(http, '<script>window.__pwned=2</script>', 'the hostile URL is text')
    t.match(http, 'api_key=******', 'and its secret masked')
    t.match(await page.textContent('#stopwatch') ?? '', /domain\s*load orders\s*2/)
    await shoot(page, 'profiler-timeline.png', 'profiler-timeline.png')

    // templates
    await page.click('#menu a[data-panel="templates"]')
    await page.waitForURL(/panel=templates/)
    t.same((await page.locator('.card.render .render-head').allTextContents()).map((s) => /#\d+\s+(\S+)/.exec(s)?.[1]), ['item.hbs', 'item.hbs', 'page.hbs'])
    t.match(await page.textContent('.card.render[data-render="3"] .render-head') ?? '', 'page.hbs in layout.hbs')
    // the README's image of this panel (partials, nested) is io-panels-browser.test.ts's
    await shoot(page, 'profiler-templates-calls.png')

    // dumps
    await page.click('#menu a[data-panel="dump"]')
    await page.waitForURL(/panel=dump/)
    const texts = await page.locator('#dumps .dump-text').allTextContents()
    t.equal(texts.length, 2)
    t.match(texts[0], "name: 'Ada'")
    t.equal(texts[1], `'${HOSTILE_DUMP}'`, 'the hostile dump is text')
    t.match(await page.textContent('#dumps .dump-where') ?? '', /test\/profiler\/panels-browser\.test\.ts:\d+/)
    await shoot(page, 'profiler-dump.png', 'profiler-dump.png')

    // configuration
    await page.click('#menu a[data-panel="config"]')
    await page.waitForURL(/panel=config/)
    t.match(await page.textContent('#config-versions') ?? '', 'fastify-kernel')
    t.match(await page.textContent('#config-plugins') ?? '', '@fastify/view')
    await shoot(page, 'profiler-config.png')

    t.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined, 'no hostile value ran')
    t.same(problems, [], 'no console errors')
  })
}
