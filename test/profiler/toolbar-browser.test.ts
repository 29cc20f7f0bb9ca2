import t from 'tap'
import { copyFileSync, mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import helmet from '@fastify/helmet'
import type { Page } from 'playwright-core'
import { buildApp } from '../helpers.js'
import { chromiumAvailable, launchChromium } from '../chromium.js'

const artifacts = resolve(import.meta.dirname, '../artifacts')
// UPDATE_README_IMAGES=1 also copies the two screenshots the README shows to docs/images/
const readmeImages = resolve(import.meta.dirname, '../../docs/images')

const PAGE = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Orders</title></head>
<body><h1>Orders</h1><p id="result">loading…</p><script src="/orders.js"></script></body></html>`
// the page's own script: an external file, as helmet's script-src 'self' wants
const PAGE_SCRIPT = `document.addEventListener('DOMContentLoaded', function () {
  // a stylesheet fetched by the page: the browser's own kind of request, left out of the AJAX list
  fetch('/assets/theme.css').then(function () { return fetch('/api/orders?status=open') }).then(function (r) { return r.json() }).then(function (body) {
    document.getElementById('result').textContent = body.count + ' open orders'
    var xhr = new XMLHttpRequest()
    xhr.open('POST', '/api/orders/<b>draft')
    xhr.send()
  })
})`

/** Console errors and warnings, CSP violations included; `expectedStatus` URLs are pages opened on purpose with a 4xx/5xx, which Chrome reports too. */
function watchConsole (page: Page, expectedStatus: Set<string>): string[] {
  const problems: string[] = []
  page.on('console', (message) => {
    if (message.type() !== 'error' && message.type() !== 'warning') return
    if (expectedStatus.has(message.location().url) && message.text().startsWith('Failed to load resource: the server responded with a status of')) return
    problems.push(`${message.type()}: ${message.text()} (${message.location().url})`)
  })
  page.on('pageerror', (error) => { problems.push(error.message) })
  page.on('requestfailed', (request) => { problems.push(`request failed: ${request.url()}`) })
  return problems
}

async function shoot (page: Page, name: string, readmeName?: string): Promise<void> {
  const path = join(artifacts, name)
  await page.screenshot({ path })
  if (readmeName !== undefined && process.env.UPDATE_README_IMAGES === '1') {
    mkdirSync(readmeImages, { recursive: true })
    copyFileSync(path, join(readmeImages, readmeName))
  }
}

if (chromiumAvailable(t)) {
  t.test('the web debug toolbar under helmet\'s CSP: shown, follows the page\'s fetch(), links to the profile; the debug error page too', async (t) => {
    mkdirSync(artifacts, { recursive: true })
    const app = await buildApp({ debug: true, fileLinkFormat: 'vscode' }, { pluginTimeout: 120_000 }, (app) => {
      // helmet's defaults: script-src 'self' (no inline script), script-src-attr 'none', default-src 'self'
      app.register(helmet)
      app.get('/orders', { config: { name: 'order_list' } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(PAGE))
      app.get('/orders.js', async (_request, reply) => reply.type('text/javascript').send(PAGE_SCRIPT))
      app.get('/assets/theme.css', async (_request, reply) => reply.type('text/css').send('body { margin: 0 }'))
      app.get('/api/orders', { config: { name: 'api_orders' } }, async (request) => {
        request.log.warn('slow orders query')
        return { count: 3 }
      })
      app.post('/api/orders/:name', async (_request, reply) => reply.code(422).send({ error: 'not a valid order' }))
      app.get('/favicon.ico', async (_request, reply) => reply.code(204).send())
    })
    t.teardown(() => app.close())
    await app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`

    const browser = await launchChromium(t)
    if (browser === undefined) return
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } })
    const problems = watchConsole(page, new Set([`${base}/boom`, `${base}/api/orders/%3Cb%3Edraft`]))

    const opened = await page.goto(`${base}/orders`)
    t.equal(opened?.status(), 200)
    const headers = await opened!.allHeaders()
    t.match(headers['content-security-policy'], /script-src 'self' 'unsafe-inline' 'nonce-[A-Za-z0-9_-]+'/, 'helmet\'s policy now allows the toolbar\'s nonce')
    const pageToken = headers['x-debug-token']

    await page.waitForSelector('.kwdt[data-kwdt-loaded]')
    t.equal(await page.locator('.kwdt-bar').evaluate((bar) => getComputedStyle(bar).position), 'fixed', 'the toolbar\'s stylesheet applied (in its shadow root)')
    t.equal((await page.textContent('[data-kwdt-status]'))?.trim(), '200', 'the toolbar shows the status')
    t.equal((await page.textContent('[data-kwdt-route]'))?.trim(), '@ order_list', 'and the route')
    t.equal(await page.locator('[data-kwdt-user]').count(), 0, 'no security configured: no user item')
    t.equal(await page.textContent('#result'), '3 open orders', 'the page\'s own script ran')

    // the page's fetch() and XHR are listed, newest first, each with its own profile
    // the toolbar is in a shadow root (Playwright's selectors pierce it; the DOM's do not)
    const inToolbar = (selector: string): Promise<string | null> => page.locator(selector).first().textContent()
    await page.waitForFunction(() => document.querySelector('fastify-kernel-toolbar')?.shadowRoot?.querySelector('[data-kwdt-ajax-count]')?.textContent === '2')
    await page.waitForFunction(() => document.querySelector('fastify-kernel-toolbar')?.shadowRoot?.querySelector('[data-kwdt-ajax-rows] tr td')?.textContent === 'POST')
    t.equal(await inToolbar('[data-kwdt-ajax-count]'), '2')
    t.equal(await page.getAttribute('[data-kwdt-ajax-count]', 'class'), 'kwdt-badge kwdt-badge-error', 'a call failed (422): the AJAX count is red, not grey')
    t.equal(await page.locator('[data-kwdt-ajax-rows] tr').count(), 2, 'the stylesheet the page fetched is not listed: the browser\'s own kind of request')
    t.notMatch(await page.textContent('[data-kwdt-ajax-rows]') ?? '', 'theme.css')
    const xhrRow = await page.locator('[data-kwdt-ajax-rows] tr').first().locator('td').allTextContents()
    t.same(xhrRow.slice(0, 3), ['POST', `${base}/api/orders/%3Cb%3Edraft`, '422'], 'the XHR, its URL as text')
    t.equal(await page.locator('[data-kwdt-ajax-rows] b').count(), 0, 'nothing from a URL becomes markup')
    t.equal(await page.getAttribute('[data-kwdt-ajax-rows] tr:first-child', 'class'), 'kwdt-ajax-row-error', 'a 4xx stands out')
    const row = await page.locator('[data-kwdt-ajax-rows] tr').nth(1).locator('td').allTextContents()
    t.equal(row[0], 'GET')
    t.equal(row[1], `${base}/api/orders?status=open`)
    t.equal(row[2], '200')
    t.match(row[3], /^\d+ ms$/)
    const ajaxToken = row[4]
    t.match(ajaxToken, /^[0-9a-f]{6}$/)
    t.not(ajaxToken, pageToken, 'the fetch has a profile of its own')
    t.equal(await page.getAttribute(`[data-kwdt-ajax-token="${ajaxToken}"]`, 'href'), `${base}/_profiler/${ajaxToken}`)
    await page.hover('[data-kwdt-ajax]')
    await shoot(page, 'toolbar.png', 'toolbar.png')
    await page.hover('[data-kwdt="logs"]')
    await shoot(page, 'toolbar-logs.png')

    // the toolbar's link opens the page's profile
    await Promise.all([page.waitForURL(new RegExp(`/_profiler/${pageToken}`)), page.click('[data-kwdt="request"] .kwdt-main')])
    t.equal(await page.textContent('#token'), pageToken)
    t.equal(await page.getAttribute('#panel', 'data-panel'), 'request')
    t.equal(await page.locator('.kwdt').count(), 0, 'profiler pages have no toolbar')
    await shoot(page, 'toolbar-profile.png')

    // the AJAX call's profile, through its link
    await page.goto(`${base}/_profiler/${ajaxToken}?panel=logs`)
    t.match(await page.textContent('#log-records') ?? '', 'slow orders query')

    // a controller error: the debug page with its source excerpt, and the toolbar, under the same CSP
    const failed = await page.goto(`${base}/boom`)
    t.equal(failed?.status(), 500)
    await page.waitForSelector('.kwdt[data-kwdt-loaded]')
    t.equal((await page.textContent('[data-kwdt-status]'))?.trim(), '500')
    const current = page.locator('#exception-2 pre.excerpt .src-line.current').first()
    t.ok(await current.isVisible(), 'the throwing line of the first application frame is shown')
    t.match(await current.textContent() ?? '', "throw new Error('kaboom'")
    t.match(await page.getAttribute('#exception-2 ol.trace a.file', 'href') ?? '', /^vscode:\/\/file\/.*helpers\.ts:\d+$/, 'frames link to the editor')
    t.equal(await page.evaluate(() => getComputedStyle(document.querySelector('pre.excerpt')!).whiteSpace), 'pre', 'the page\'s stylesheet applied (its nonce is allowed)')
    await shoot(page, 'error-page.png', 'error-page.png')

    t.same(problems, [], 'no console errors or CSP violations')
  })
}
