/**
 * "Profile the next request" in a real browser (Debian's chromium), under helmet's CSP: the
 * toolbar's button arms this browser, its next page is CPU-profiled (the browser's own requests
 * for the page's assets and favicon are not), and the CPU panel shows the flame graph.
 */
import t from 'tap'
import { copyFileSync, mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import helmet from '@fastify/helmet'
import type { Page } from 'playwright-core'
import { buildApp } from '../helpers.js'
import { chromiumAvailable, launchChromium } from '../chromium.js'

const artifacts = resolve(import.meta.dirname, '../artifacts')
// UPDATE_README_IMAGES=1 also copies the screenshot the docs show to docs/images/
const docsImages = resolve(import.meta.dirname, '../../docs/images')

const PAGE = (title: string): string => `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title><link rel="stylesheet" href="/app.css"></head>
<body><h1>${title}</h1><img src="/logo.png" alt=""></body></html>`

// an invoice page's work, bounded by its rounds: a call tree a flame graph can show
interface Line { sku: string, quantity: number, price: number }
function taxOf (amount: number, rounds: number): number {
  let tax = 0
  for (let i = 0; i < rounds; i++) tax += Math.sqrt(amount + i) * 0.0001
  return tax
}
function priceInvoiceLine (line: Line): number {
  return line.quantity * line.price + taxOf(line.price, 30_000)
}
function renderInvoiceRows (lines: Line[]): string {
  let html = ''
  for (let i = 0; i < 400; i++) html = lines.map((line) => `<tr><td>${line.sku}</td><td>${line.quantity}</td></tr>`).join('') + String(i)
  return html
}
function buildInvoice (): { total: number, rows: string } {
  const lines: Line[] = Array.from({ length: 60 }, (_, i) => ({ sku: `SKU-${i}`, quantity: i % 5 + 1, price: 10 + i }))
  const total = lines.reduce((sum, line) => sum + priceInvoiceLine(line), 0)
  return { total, rows: renderInvoiceRows(lines) }
}

async function shoot (page: Page, name: string, docsName?: string): Promise<void> {
  const path = join(artifacts, name)
  await page.screenshot({ path, fullPage: true })
  if (docsName !== undefined && process.env.UPDATE_README_IMAGES === '1') {
    mkdirSync(docsImages, { recursive: true })
    copyFileSync(path, join(docsImages, docsName))
  }
}

if (chromiumAvailable(t)) {
  t.test('the toolbar arms the next request; it is CPU-profiled, the browser\'s own requests are not; the flame graph shows it', async (t) => {
    mkdirSync(artifacts, { recursive: true })
    // each request of the app, with its profile's token
    const seen = new Map<string, string>()
    // the lag pause off: starting and stopping V8's CPU profiler blocks the loop for 0.3-0.9 s (Node 26
    // the longer), which the pause reads as lag, and the page's assets asked right after would
    // go unprofiled: what this test checks is that they are not CPU-profiled
    const app = await buildApp({ debug: true, profiler: { maxEventLoopDelay: false } }, { pluginTimeout: 120_000 }, (app) => {
      app.register(helmet)
      app.addHook('onResponse', async (request, reply) => { seen.set(request.url, String(reply.getHeader('x-debug-token'))) })
      app.get('/orders', async (_request, reply) => reply.type('text/html; charset=utf-8').send(PAGE('Orders')))
      app.get('/invoice', async function invoiceHandler (_request, reply) {
        const invoice = buildInvoice()
        return reply.type('text/html; charset=utf-8').send(PAGE(`Invoice: ${invoice.total.toFixed(2)} (${invoice.rows.length} bytes of rows)`))
      })
      app.get('/app.css', async (_request, reply) => reply.type('text/css').send('h1 { font-family: sans-serif }'))
      app.get('/logo.png', async (_request, reply) => reply.code(204).send())
      app.get('/favicon.ico', async (_request, reply) => reply.code(204).send())
    })
    t.teardown(() => app.close())
    await app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`

    const browser = await launchChromium(t)
    if (browser === undefined) return
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    const problems: string[] = []
    page.on('console', (message) => { if (message.type() === 'error' || message.type() === 'warning') problems.push(`${message.type()}: ${message.text()}`) })
    page.on('pageerror', (error) => { problems.push(error.message) })

    await page.goto(`${base}/orders`)
    await page.waitForSelector('.kwdt[data-kwdt-loaded]')
    const button = page.locator('.kwdt [data-kwdt-cpu-next]')
    t.equal((await button.textContent())?.trim(), 'Profile the next request')
    t.equal(await button.getAttribute('aria-pressed'), 'false')
    t.equal(await page.locator('.kwdt [data-kwdt="cpu"]').count(), 0, 'this page was not CPU-profiled')

    await button.click()
    await page.waitForSelector('.kwdt [data-kwdt="cpu-next"][data-kwdt-armed] [aria-pressed="true"]')
    t.equal((await button.textContent())?.trim(), 'CPU: next request armed', 'the button shows it is armed')

    seen.clear()
    const invoice = await page.goto(`${base}/invoice`)
    await page.waitForSelector('.kwdt[data-kwdt-loaded]')
    t.ok(seen.has('/app.css') && seen.has('/logo.png'), 'the page\'s assets were asked too')
    const token = (await invoice!.allHeaders())['x-debug-token']
    t.equal(await page.locator('.kwdt [data-kwdt="cpu"]').count(), 1, 'the next page is CPU-profiled: its toolbar has a CPU item')
    t.equal(await page.locator('.kwdt [data-kwdt-cpu-next]').getAttribute('aria-pressed'), 'false', 'and the button is no longer armed')
    const profile = await app.kernelProfiler.profileOf(token)
    t.ok(profile.collected.cpu?.profile?.nodes.some((node) => node.callFrame.functionName === 'priceInvoiceLine'), 'the page\'s work was sampled')
    for (const url of ['/app.css', '/logo.png']) {
      const asset = await app.kernelProfiler.profileOf(seen.get(url)!)
      t.equal(asset.collected.cpu, undefined, `${url} (the browser's own request) is not CPU-profiled`)
    }

    // the panel, from the toolbar's link
    await page.click('.kwdt [data-kwdt="cpu"] .kwdt-main')
    await page.waitForSelector('#cpu-flame-graph svg.flame-graph')
    t.match(page.url(), new RegExp(`/_profiler/${token}\\?panel=cpu$`))
    const titles = await page.locator('#cpu-flame-graph svg g title').allTextContents()
    t.ok(titles.some((title) => title.startsWith('priceInvoiceLine — test/profiler/cpu-browser.test.ts:')), 'the flame graph has the page\'s functions, at their source')
    t.ok(titles.some((title) => title.startsWith('invoiceHandler — ')), 'and the route\'s handler')
    const box = await page.locator('#cpu-flame-graph svg.flame-graph').boundingBox()
    t.ok(box !== null && box.width > 800 && box.height > 40, 'the flame graph is drawn at the page\'s width')
    t.match(await page.textContent('#cpu-process-note') ?? '', /The samples are the process's/)

    // --- the flame graph's script: app code only, zoom, search, keyboard, tooltips ---
    const frame = (name: string) => page.locator(`#cpu-flame-svg g[data-name="${name}"]`).first()
    const shownKinds = async (): Promise<string[]> => await page.locator('#cpu-flame-svg g[data-i]').evaluateAll((gs) => [...new Set(gs.filter((g) => g.getAttribute('display') !== 'none').map((g) => g.getAttribute('data-kind') ?? ''))].sort())
    const svgWidth = async (): Promise<number> => (await page.locator('#cpu-flame-svg').boundingBox())!.width
    t.ok(await page.locator('#cpu-flame-app').isChecked(), 'the graph opens on the app\'s code only')
    t.same(await shownKinds(), ['app', 'vm'], 'only the app\'s frames are drawn (and the root)')
    const appTop = (await frame('priceInvoiceLine').boundingBox())!
    t.ok(appTop.y + appTop.height < 800, `the app's priceInvoiceLine is in the window without scrolling (its bottom at ${Math.round(appTop.y + appTop.height)} px of 800)`)
    await shoot(page, 'profiler-cpu.png', 'profiler-cpu.png')
    // every frame: the app's ones deeper
    await page.locator('#cpu-flame-app').uncheck()
    t.ok((await shownKinds()).includes('dependency'), 'unchecked: Fastify\'s frames (node_modules) are drawn too')
    const fullTop = (await frame('priceInvoiceLine').boundingBox())!
    t.ok(fullTop.y > appTop.y + 100, `every frame: priceInvoiceLine ${Math.round(fullTop.y - appTop.y)} px lower`)
    t.comment(`priceInvoiceLine's top: ${Math.round(fullTop.y)} px with every frame, ${Math.round(appTop.y)} px with the app's code only (1280 x 800)`)
    await page.locator('#cpu-flame-app').check()

    // click: zoom into the frame, its callers full width above; Reset zooms out
    const narrow = (await frame('priceInvoiceLine').boundingBox())!.width
    await frame('priceInvoiceLine').locator('rect').click()
    await page.waitForFunction(() => !(document.getElementById('cpu-flame-reset') as HTMLButtonElement).disabled)
    const zoomed = (await frame('priceInvoiceLine').boundingBox())!
    t.ok(Math.abs(zoomed.width - await svgWidth()) < 3 && zoomed.width > narrow, `a click zooms into the frame: ${Math.round(narrow)} -> ${Math.round(zoomed.width)} px`)
    t.equal(await frame('renderInvoiceRows').getAttribute('display'), 'none', 'frames outside it are left out')
    t.ok(Math.abs((await frame('buildInvoice').boundingBox())!.width - await svgWidth()) < 3, 'its caller is drawn full width above it')
    t.match(await page.textContent('#cpu-flame-detail') ?? '', /^priceInvoiceLine — test\/profiler\/cpu-browser\.test\.ts:\d+ · self/, 'the line below the graph tells the frame')
    await shoot(page, 'profiler-cpu-zoomed.png')
    await page.click('#cpu-flame-reset')
    t.ok(Math.abs((await frame('priceInvoiceLine').boundingBox())!.width - narrow) < 3, 'Reset zooms back out')
    t.equal(await frame('renderInvoiceRows').getAttribute('display'), null)

    // search: the matching frames highlighted, the others dimmed, their share said
    await page.fill('#cpu-flame-search', 'taxof')
    t.match(await frame('taxOf').getAttribute('class') ?? '', /\bmatch\b/, 'search: the matching frame is highlighted')
    t.match(await page.textContent('#cpu-flame-found') ?? '', /^\d+ frames? match(es)?: [\d.]+ % of the time on the CPU$/)
    t.equal(await frame('buildInvoice').locator('rect').evaluate((rect) => getComputedStyle(rect).opacity), '0.25', 'the others are dimmed')
    await page.fill('#cpu-flame-search', '')
    t.equal(await page.textContent('#cpu-flame-found'), '')

    // the keyboard: one tab stop for the graph; arrows move, Enter zooms, Escape zooms out; a tooltip on focus
    await page.locator('#cpu-flame-app').focus()
    await page.keyboard.press('Tab')
    t.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-i')), '0', 'Tab reaches the graph: its root frame')
    t.ok(await page.locator('#cpu-flame-tip').isVisible(), 'a focused frame shows its tooltip')
    let name = 'all'
    for (let i = 0; i < 12 && name !== 'priceInvoiceLine'; i++) {
      await page.keyboard.press('ArrowDown')
      name = await page.evaluate(() => document.activeElement?.getAttribute('data-name') ?? '')
      if (name === 'renderInvoiceRows') { await page.keyboard.press('ArrowLeft'); await page.keyboard.press('ArrowRight') }
      name = await page.evaluate(() => document.activeElement?.getAttribute('data-name') ?? '')
    }
    t.ok(['priceInvoiceLine', 'taxOf', 'buildInvoice', 'invoiceHandler'].includes(name), `ArrowDown walks into the app's calls (at ${name})`)
    t.match(await page.textContent('#cpu-flame-tip') ?? '', new RegExp(`^${name} — `), 'the tooltip follows the focus')
    await page.keyboard.press('Enter')
    t.ok(Math.abs((await page.locator(`#cpu-flame-svg g[data-name="${name}"]`).first().boundingBox())!.width - await svgWidth()) < 3, 'Enter zooms into the focused frame')
    await page.keyboard.press('Escape')
    const caller = await page.evaluate(() => document.activeElement?.getAttribute('data-name') ?? '')
    t.ok(caller !== '' && caller !== name, `Escape zooms out to the caller (${caller}), focused`)
    t.ok(Math.abs(await page.evaluate(() => document.activeElement!.querySelector('rect')!.getBoundingClientRect().width) - await svgWidth()) < 3, 'the caller now full width')
    await page.click('#cpu-flame-reset').catch(() => {})

    // a phone: drawn at its width, the labels at their size; a tap shows the frame's tooltip
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true })
    const touch = await phone.newPage()
    await touch.goto(page.url())
    await touch.waitForSelector('#cpu-flame-svg g[data-name="priceInvoiceLine"]')
    const drawn = await touch.locator('#cpu-flame-svg').evaluate((svg) => [(svg as SVGSVGElement).viewBox.baseVal.width, svg.getBoundingClientRect().width])
    t.ok(Math.abs(drawn[0]! - drawn[1]!) < 2 && drawn[1]! <= 390, `390 px: the graph is drawn at its width in pixels (${Math.round(drawn[0]!)} / ${Math.round(drawn[1]!)}), its labels 11 px`)
    await touch.locator('#cpu-flame-svg g[data-name="buildInvoice"] rect').first().tap()
    await touch.waitForSelector('#cpu-flame-tip:not([hidden])')
    t.match(await touch.textContent('#cpu-flame-tip') ?? '', /^buildInvoice — /, 'a tap shows the frame\'s tooltip')
    await touch.screenshot({ path: join(artifacts, 'profiler-cpu-phone.png') })
    await phone.close()

    // the download link
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#cpu-download')])
    t.equal(download.suggestedFilename(), `${token}.cpuprofile`)

    // the next page again: not profiled (used once)
    await page.goto(`${base}/orders`)
    await page.waitForSelector('.kwdt[data-kwdt-loaded]')
    t.equal(await page.locator('.kwdt [data-kwdt="cpu"]').count(), 0, 'used once')
    t.same(problems, [], 'no console error, no CSP violation')
  })
}
