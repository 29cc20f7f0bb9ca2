/**
 * The toolbar follows the page in a real browser (Debian's chromium), under @fastify/helmet's
 * policy: htmx 2 and htmx 4's hx-boost and Turbo Drive (the real libraries from npm, served by the
 * app) swap the body and push the URL, and the toolbar shows each new page's profile, lists the
 * request that fetched it, and goes back with the history; a script that replaces the body or
 * removes the toolbar; a router that fetches a page and pushes its URL; a response that says
 * X-Debug-Toolbar-Replace: 1, and `toolbar: { ajaxReplace: true }` (Symfony 7.3's ajax_replace).
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { FastifyInstance } from 'fastify'
import type { Page } from 'playwright-core'
import { chromiumAvailable, launchChromium } from '../chromium.js'
import { startShop } from './shop.js'
import { shoot, watchConsole } from './browser-checks.js'

const require = createRequire(import.meta.url)
const LIBRARIES: Record<string, string> = {
  'htmx2.js': readFileSync(require.resolve('htmx2/dist/htmx.min.js'), 'utf8'),
  'htmx4.js': readFileSync(require.resolve('htmx.org/dist/htmx.min.js'), 'utf8'),
  'turbo.js': readFileSync(require.resolve('@hotwired/turbo/dist/turbo.es2017-umd.js'), 'utf8')
}

function html (title: string, body: string, options: { head?: string, bodyAttributes?: string } = {}): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>${options.head ?? ''}</head>` +
    `<body${options.bodyAttributes ?? ''}><main><h1 id="title">${title}</h1>${body}</main></body></html>`
}

// the pages' own scripts: files, as helmet's script-src 'self' wants
const SCRIPTS: Record<string, string> = {
  'swap.js': `document.addEventListener('click', function (event) {
    var id = event.target.id
    if (id === 'inner') document.body.innerHTML = '<main><h1 id="title">Replaced by innerHTML</h1><button id="replace">replace</button></main>'
    if (id === 'replace') { var body = document.createElement('body'); body.innerHTML = '<main><h1 id="title">A new body element</h1><button id="remove">remove</button></main>'; document.body.replaceWith(body) }
    if (id === 'remove') document.querySelector('fastify-kernel-toolbar').remove()
    if (id === 'next') fetch('/swap/next').then(function (r) { return r.text() }).then(function (text) {
      var doc = new DOMParser().parseFromString(text, 'text/html')
      document.body.replaceWith(document.adoptNode(doc.body))
    })
  })`,
  'spa.js': `document.addEventListener('click', function (event) {
    if (event.target.id !== 'orders') return
    event.preventDefault()
    fetch('/spa/orders', { headers: { Accept: 'text/html' } }).then(function (r) { return r.text() }).then(function (text) {
      var doc = new DOMParser().parseFromString(text, 'text/html')
      document.querySelector('main').replaceWith(document.adoptNode(doc.querySelector('main')))
      history.pushState({}, '', '/spa/orders')
    })
  })`,
  'cart.js': `document.addEventListener('click', function (event) {
    if (event.target.id === 'add') fetch('/api/cart', { method: 'POST' }).then(function (r) { return r.json() }).then(function (body) { document.getElementById('count').textContent = String(body.items) })
    if (event.target.id === 'price') fetch('/api/price').then(function (r) { return r.json() }).then(function (body) { document.getElementById('count').textContent = String(body.price) })
    if (event.target.id === 'asset') fetch('/assets/app.css')
  })`
}

function routes (app: FastifyInstance): void {
  for (const [name, source] of Object.entries({ ...LIBRARIES, ...SCRIPTS })) {
    app.get(`/vendor/${name}`, async (_request, reply) => reply.type('text/javascript').send(source))
  }
  app.get('/assets/app.css', async (_request, reply) => reply.type('text/css').send('main { margin: 0 }'))
  for (const [fw, head, attributes] of [
    ['htmx2', '<script src="/vendor/htmx2.js"></script>', ' hx-boost="true"'],
    // htmx 4 inherits an attribute only when it says so
    ['htmx4', '<script src="/vendor/htmx4.js"></script>', ' hx-boost:inherited="true"'],
    ['turbo', '<script src="/vendor/turbo.js"></script>', '']
  ] as const) {
    for (const [name, other] of [['a', 'b'], ['b', 'a']]) {
      app.get(`/${fw}/${name}`, { config: { name: `${fw}_${name}` } }, async (_request, reply) => reply.type('text/html; charset=utf-8')
        .send(html(`${fw} page ${name.toUpperCase()}`, `<p><a id="to-${other}" href="/${fw}/${other}">to page ${other.toUpperCase()}</a></p>`, { head, bodyAttributes: attributes })))
    }
  }
  app.get('/swap', { config: { name: 'swap' } }, async (_request, reply) => reply.type('text/html; charset=utf-8')
    .send(html('Swap', '<button id="inner">innerHTML</button> <button id="next">fetch the next page</button>', { head: '<script src="/vendor/swap.js"></script>' })))
  app.get('/swap/next', { config: { name: 'swap_next' } }, async (_request, reply) => reply.type('text/html; charset=utf-8')
    .send(html('The next page', '<p>fetched, its body swapped in</p>')))
  app.get('/spa', { config: { name: 'spa_home' } }, async (_request, reply) => reply.type('text/html; charset=utf-8')
    .send(html('SPA home', '<a id="orders" href="/spa/orders">orders</a>', { head: '<script src="/vendor/spa.js"></script>' })))
  app.get('/spa/orders', { config: { name: 'spa_orders' } }, async (_request, reply) => reply.type('text/html; charset=utf-8')
    .send(html('SPA orders', '<p>3 open orders</p>')))
  app.get('/cart', { config: { name: 'cart' } }, async (_request, reply) => reply.type('text/html; charset=utf-8')
    .send(html('Cart', '<button id="add">add</button> <button id="price">price</button> <button id="asset">asset</button> <span id="count">0</span>', { head: '<script src="/vendor/cart.js"></script>' })))
  app.post('/api/cart', { config: { name: 'api_cart' } }, async (_request, reply) => reply.header('x-debug-toolbar-replace', '1').send({ items: 1 }))
}

/** The token the toolbar shows (its host's attribute, set once the fragment is in). */
async function shownToken (page: Page): Promise<string | null> {
  return await page.evaluate(() => document.querySelector('fastify-kernel-toolbar')?.getAttribute('data-kwdt-token') ?? null)
}

async function waitForToken (page: Page, token: string): Promise<void> {
  await page.waitForFunction((token) => {
    const host = document.querySelector('fastify-kernel-toolbar')
    return host?.getAttribute('data-kwdt-token') === token && host.shadowRoot?.querySelector(`.kwdt-bar[data-kwdt-token="${token}"]`) !== null
  }, token)
}

async function toolbars (page: Page): Promise<number> {
  return await page.evaluate(() => document.querySelectorAll('fastify-kernel-toolbar').length)
}

if (chromiumAvailable(t)) {
  t.test('the toolbar follows hx-boost (htmx 2 and 4), Turbo Drive, body swaps, a router\'s pushState and X-Debug-Toolbar-Replace', async (t) => {
    const shop = await startShop(t, { routes })
    const browser = await launchChromium(t)
    if (browser === undefined) return
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    const problems = watchConsole(page)

    for (const fw of ['htmx2', 'htmx4', 'turbo']) {
      const first = await page.goto(`${shop.base}/${fw}/a`)
      const tokenA = (await first!.allHeaders())['x-debug-token']!
      await waitForToken(page, tokenA)
      t.equal((await page.locator('[data-kwdt-route]').textContent())?.trim(), `@ ${fw}_a`, `${fw}: page A's toolbar`)
      await page.evaluate(() => { (window as unknown as { marker: number }).marker = 1 })

      const [fetched] = await Promise.all([page.waitForResponse((response) => response.url() === `${shop.base}/${fw}/b`), page.click('#to-b')])
      const tokenB = (await fetched.allHeaders())['x-debug-token']!
      t.not(tokenB, tokenA)
      await page.waitForFunction((title) => document.getElementById('title')?.textContent === title, `${fw} page B`)
      t.equal(await page.evaluate(() => (window as unknown as { marker?: number }).marker), 1, `${fw}: page B came without a page load (the body was swapped)`)
      t.equal(page.url(), `${shop.base}/${fw}/b`, `${fw}: its URL pushed`)
      await waitForToken(page, tokenB)
      t.equal((await page.locator('[data-kwdt-route]').textContent())?.trim(), `@ ${fw}_b`, `${fw}: the toolbar shows page B's profile`)
      t.equal(await toolbars(page), 1, `${fw}: one toolbar`)
      // the request that fetched page B is in the AJAX list, with its profile
      await page.waitForFunction((token) => document.querySelector('fastify-kernel-toolbar')?.shadowRoot?.querySelector(`[data-kwdt-ajax-token="${token}"]`) !== null, tokenB)
      t.ok(await page.locator(`[data-kwdt-ajax-token="${tokenB}"]`).count() === 1, `${fw}: the fetch of page B is listed`)
      if (fw === 'htmx2') await shoot(page, 'toolbar-htmx-boost.png', { clip: { x: 0, y: 680, width: 1280, height: 120 } })

      // back: the page in view is A again, and so is its toolbar
      await page.goBack()
      await page.waitForFunction((title) => document.getElementById('title')?.textContent === title, `${fw} page A`)
      const inView = await page.evaluate(() => { const snippets = document.querySelectorAll('[data-kwdt-snippet]'); return snippets[snippets.length - 1]?.getAttribute('data-token') ?? null })
      t.ok(inView !== null && inView !== tokenB, `${fw}: page A's body is back, with its snippet`)
      await waitForToken(page, inView!)
      t.equal((await page.locator('[data-kwdt-route]').textContent())?.trim(), `@ ${fw}_a`, `${fw}: back on A, the toolbar shows A's profile`)
      t.equal(await toolbars(page), 1)
    }

    // any body replacement: the toolbar stays, and comes back if removed
    const swap = await page.goto(`${shop.base}/swap`)
    const swapToken = (await swap!.allHeaders())['x-debug-token']!
    await waitForToken(page, swapToken)
    await page.click('#inner')
    await page.waitForSelector('#replace')
    t.ok(await page.locator('.kwdt-bar').isVisible(), 'body.innerHTML replaced: the toolbar is still there')
    t.equal(await shownToken(page), swapToken, 'showing the same page')
    await page.click('#replace')
    await page.waitForSelector('#remove')
    t.ok(await page.locator('.kwdt-bar').isVisible(), 'a new <body> element: still there')
    await page.click('#remove')
    await page.waitForFunction(() => document.querySelector('fastify-kernel-toolbar')?.isConnected === true)
    t.ok(await page.locator('.kwdt-bar').isVisible(), 'removed by a script: put back')
    t.equal(await shownToken(page), swapToken)
    // a script that fetches a page and swaps its body in: the new body's snippet names its profile
    await page.goto(`${shop.base}/swap`)
    const [next] = await Promise.all([page.waitForResponse((response) => response.url() === `${shop.base}/swap/next`), page.click('#next')])
    await waitForToken(page, (await next.allHeaders())['x-debug-token']!)
    t.equal((await page.locator('[data-kwdt-route]').textContent())?.trim(), '@ swap_next', 'a body fetched and swapped in: its profile')

    // a router that fetches a page, renders part of it and pushes its URL (no snippet enters the page)
    const spa = await page.goto(`${shop.base}/spa`)
    const spaToken = (await spa!.allHeaders())['x-debug-token']!
    await waitForToken(page, spaToken)
    const [orders] = await Promise.all([page.waitForResponse((response) => response.url() === `${shop.base}/spa/orders`), page.click('#orders')])
    const ordersToken = (await orders.allHeaders())['x-debug-token']!
    await waitForToken(page, ordersToken)
    t.equal((await page.locator('[data-kwdt-route]').textContent())?.trim(), '@ spa_orders', 'pushState after fetching the page: the toolbar shows that page\'s profile')
    await page.goBack()
    await waitForToken(page, spaToken)
    t.equal((await page.locator('[data-kwdt-route]').textContent())?.trim(), '@ spa_home', 'back (popstate): the first page\'s profile again')

    // X-Debug-Toolbar-Replace: 1 on a fetch's response: the toolbar takes its profile
    const cart = await page.goto(`${shop.base}/cart`)
    await waitForToken(page, (await cart!.allHeaders())['x-debug-token']!)
    const [added] = await Promise.all([page.waitForResponse((response) => response.url() === `${shop.base}/api/cart`), page.click('#add')])
    await waitForToken(page, (await added.allHeaders())['x-debug-token']!)
    t.equal((await page.locator('[data-kwdt-route]').textContent())?.trim(), '@ api_cart', 'the response said so: the toolbar shows the call\'s profile')
    // without it, a fetch is only listed
    const [price] = await Promise.all([page.waitForResponse((response) => response.url() === `${shop.base}/api/price`), page.click('#price')])
    const priceToken = (await price.allHeaders())['x-debug-token']!
    await page.waitForFunction((token) => document.querySelector('fastify-kernel-toolbar')?.shadowRoot?.querySelector(`[data-kwdt-ajax-token="${token}"]`) !== null, priceToken)
    t.equal((await page.locator('[data-kwdt-route]').textContent())?.trim(), '@ api_cart', 'a fetch without the header is listed, not shown')
    t.same(problems, [], 'no console error, no CSP violation')
  })

  t.test('profiler: { toolbar: { ajaxReplace: true } }: each fetch\'s profile replaces the toolbar; a navigation or an asset does not say so', async (t) => {
    const shop = await startShop(t, { routes, profiler: { toolbar: { ajaxReplace: true } } })
    const browser = await launchChromium(t)
    if (browser === undefined) return
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    const problems = watchConsole(page)
    const cart = await page.goto(`${shop.base}/cart`)
    t.equal((await cart!.allHeaders())['x-debug-toolbar-replace'], undefined, 'a page\'s navigation does not say it')
    await waitForToken(page, (await cart!.allHeaders())['x-debug-token']!)
    const [asset] = await Promise.all([page.waitForResponse((response) => response.url() === `${shop.base}/assets/app.css`), page.click('#asset')])
    t.equal((await asset.allHeaders())['x-debug-toolbar-replace'], undefined, 'nor an asset the page fetched (the browser\'s own kind of request)')
    const [price] = await Promise.all([page.waitForResponse((response) => response.url() === `${shop.base}/api/price`), page.click('#price')])
    t.equal((await price.allHeaders())['x-debug-toolbar-replace'], '1', 'a fetch\'s response says it')
    await waitForToken(page, (await price.allHeaders())['x-debug-token']!)
    t.equal((await page.locator('[data-kwdt-route]').textContent())?.trim(), '@ api_price', 'the toolbar shows the fetch\'s profile')
    t.same(problems, [])
  })
}
