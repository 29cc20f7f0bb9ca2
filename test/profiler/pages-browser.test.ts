/**
 * The profiler's pages in a real browser (Debian's chromium), under @fastify/helmet's policy:
 * axe-core finds no serious or critical violation on the toolbar and on every kind of page, in the
 * light and the dark theme and on a phone; each page has an h1 and landmarks; on a phone the menu
 * folds above the panel; SQL wraps between tokens and numbers never break; the POST buttons work
 * from a click (the capture switch, EXPLAIN).
 */
import t from 'tap'
import type { Page } from 'playwright-core'
import helmet from '@fastify/helmet'
import { chromiumAvailable, launchChromium } from '../chromium.js'
import { buildApp } from '../helpers.js'
import { startShop } from './shop.js'
import { axe, severe, shoot, watchConsole } from './browser-checks.js'

/** Where a statement's rendered lines break: the character before each break (a soft break at a space is the space). */
async function lineBreaks (page: Page, selector: string): Promise<string[]> {
  return await page.locator(selector).first().evaluate((pre) => {
    const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT)
    const chars: Array<{ char: string, top: number }> = []
    const range = document.createRange()
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      const text = node.textContent ?? ''
      for (let i = 0; i < text.length; i++) {
        range.setStart(node, i)
        range.setEnd(node, i + 1)
        const rects = range.getClientRects()
        if (rects.length > 0) chars.push({ char: text[i]!, top: rects[0]!.top })
      }
    }
    const breaks: string[] = []
    for (let i = 1; i < chars.length; i++) {
      if (chars[i]!.top > chars[i - 1]!.top + 2 && chars[i - 1]!.char !== '\n') breaks.push(`${chars[i - 1]!.char}|${chars[i]!.char}`)
    }
    return breaks
  })
}

/** Cells of numbers whose text takes more than one line (a flag beside the number is an inline box a pixel or two off the text's top). */
async function brokenNumbers (page: Page): Promise<string[]> {
  return await page.evaluate(() => Array.from(document.querySelectorAll('td.num')).filter((cell) => {
    const range = document.createRange()
    range.selectNodeContents(cell)
    const tops = Array.from(range.getClientRects()).filter((rect) => rect.width > 0).map((rect) => rect.top)
    return tops.length > 0 && Math.max(...tops) - Math.min(...tops) > 8
  }).map((cell) => cell.textContent ?? ''))
}

async function landmarks (page: Page): Promise<{ h1: number, main: number, banner: number, nav: number }> {
  return await page.evaluate(() => ({
    h1: document.querySelectorAll('h1').length,
    main: document.querySelectorAll('main').length,
    banner: document.querySelectorAll('body > header').length,
    nav: document.querySelectorAll('nav[aria-label]').length
  }))
}

if (chromiumAvailable(t)) {
  t.test('axe-core on the toolbar and every page kind, light and dark, desktop and phone; the phone\'s menu; SQL and numbers; EXPLAIN from a click', async (t) => {
    const shop = await startShop(t)
    const browser = await launchChromium(t)
    if (browser === undefined) return
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    const problems = watchConsole(page, (text) => text.startsWith('Failed to load resource: the server responded with a status of'))

    // the profiles: the shop's page (most panels), a failed request, a 404, a CPU-profiled request
    const shopPage = await page.goto(`${shop.base}/shop`)
    const token = (await shopPage!.allHeaders())['x-debug-token']!
    await page.waitForSelector('.kwdt[data-kwdt-loaded]')
    const failed = await fetch(`${shop.base}/boom`)
    const failedToken = failed.headers.get('x-debug-token')!
    const cpu = await fetch(`${shop.base}/api/price`, { headers: { 'x-kernel-profile': 'cpu' } })
    const cpuToken = cpu.headers.get('x-debug-token')!
    await shop.app.kernelProfiler.profileOf(cpuToken)
    await shop.app.kernelProfiler.profileOf(failedToken)

    const pages: Array<[string, string]> = [
      ['the toolbar on the app\'s page', '/shop'],
      ...['request', 'db', 'cache', 'http_client', 'templates', 'time', 'logs', 'mail', 'queue', 'dump', 'events', 'routing', 'security', 'config'].map((panel): [string, string] => [`the ${panel} panel`, `/_profiler/${token}?panel=${panel}`]),
      ['the exception panel', `/_profiler/${failedToken}?panel=exception`],
      ['the CPU panel', `/_profiler/${cpuToken}?panel=cpu`],
      ['the search page', '/_profiler/'],
      ['a token not found', '/_profiler/abcdef'],
      ['the debug error page (500)', '/boom'],
      ['the debug error page (404)', '/no/such/page']
    ]
    const counts: string[] = []
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      for (const [what, url] of pages) {
        await page.goto(`${shop.base}${url}`)
        if (url === '/shop' || url === '/boom' || url === '/no/such/page') await page.waitForSelector('.kwdt[data-kwdt-loaded]')
        const violations = await axe(page)
        counts.push(`${scheme} ${what}: ${violations.map((v) => `${v.id}(${v.impact ?? '?'}) ${v.nodes}`).join(', ') || 'none'}`)
        t.same(severe(violations), [], `${scheme}: ${what}: no serious or critical violation`)
        if (url.startsWith('/_profiler')) {
          const marks = await landmarks(page)
          t.ok(marks.h1 === 1 && marks.main === 1 && marks.banner === 1 && marks.nav >= 1, `${what}: one h1, a main, a banner and a labelled nav (${JSON.stringify(marks)})`)
        }
      }
      // the toolbar with a popup open, and its ⋯ menu on a phone
      await page.goto(`${shop.base}/shop`)
      await page.waitForSelector('.kwdt[data-kwdt-loaded]')
      await page.hover('[data-kwdt="db"] > .kwdt-main')
      t.same(severe(await axe(page)), [], `${scheme}: the toolbar with the DB popup open`)
      if (scheme === 'dark') await shoot(page, 'toolbar-dark.png', { docsName: 'toolbar-dark.png', clip: { x: 0, y: 700, width: 1280, height: 200 } })
      await page.setViewportSize({ width: 390, height: 844 })
      await page.click('[data-kwdt-more-button]')
      t.same(severe(await axe(page)), [], `${scheme}: the toolbar's ⋯ menu, 390 px`)
      await page.goto(`${shop.base}/_profiler/${token}?panel=db`)
      t.same(severe(await axe(page)), [], `${scheme}: the Database panel, 390 px`)
      await page.setViewportSize({ width: 1280, height: 900 })
    }
    t.comment(counts.join('\n'))

    // the dark theme: the pages' colours follow the system's
    await page.emulateMedia({ colorScheme: 'dark' })
    await page.goto(`${shop.base}/_profiler/${token}?panel=db`)
    t.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(15, 20, 26)', 'dark: the page is dark')
    t.equal(await page.locator('.card').first().evaluate((card) => getComputedStyle(card).backgroundColor), 'rgb(23, 30, 38)')
    await shoot(page, 'profiler-dark.png', { docsName: 'profiler-dark.png' })
    await page.goto(`${shop.base}/shop`)
    await page.waitForSelector('.kwdt[data-kwdt-loaded]')
    await page.hover('[data-kwdt="db"] > .kwdt-main')
    t.equal(await page.locator('[data-kwdt="db"] > .kwdt-info').evaluate((info) => getComputedStyle(info).backgroundColor), 'rgb(28, 37, 48)', 'dark: the toolbar\'s popups too')
    await page.emulateMedia({ colorScheme: 'light' })
    await page.goto(`${shop.base}/_profiler/${token}?panel=db`)
    t.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(244, 245, 247)', 'light: the page is light')

    // a phone: the menu folds above the panel, the panel takes the width
    await page.setViewportSize({ width: 390, height: 844 })
    await page.goto(`${shop.base}/_profiler/${token}?panel=db`)
    t.ok(await page.locator('#menu summary').isVisible(), 'phone: the menu is a "Panel: Database" button')
    t.equal((await page.locator('#menu summary').textContent())?.trim(), 'Panel: Database')
    t.notOk(await page.locator('#menu a[data-panel="cache"]').isVisible(), 'folded')
    const panel = (await page.locator('main#panel').boundingBox())!
    t.ok(panel.x <= 16 && panel.width >= 350, `the panel takes the width (${Math.round(panel.x)}, ${Math.round(panel.width)} px)`)
    t.equal(await page.evaluate(() => document.documentElement.scrollWidth), 390, 'nothing wider than the window')
    t.same(await brokenNumbers(page), [], 'phone: no number broken across lines')
    t.same((await lineBreaks(page, '#db-statements tr[data-statement="8"] pre.sql')).filter((at) => !/^[ ,(=.]\|/.test(at)), [], 'phone: the long statement wraps between tokens')
    await shoot(page, 'profiler-phone.png', { docsName: 'profiler-phone.png' })
    await page.click('#menu summary')
    t.ok(await page.locator('#menu a[data-panel="cache"]').isVisible(), 'a tap opens the menu')
    const menuBox = (await page.locator('#menu .menu-links').boundingBox())!
    t.ok(menuBox.y + menuBox.height <= (await page.locator('main#panel').boundingBox())!.y, 'above the panel')
    await shoot(page, 'profiler-phone-menu.png', { docsName: 'profiler-phone-menu.png' })
    await Promise.all([page.waitForURL(/panel=cache/), page.click('#menu a[data-panel="cache"]')])
    t.notOk(await page.locator('#menu a[data-panel="db"]').isVisible(), 'the next panel opens with the menu folded')

    // 800 px (the width where SQL broke mid-word): breaks between tokens only, numbers whole
    await page.setViewportSize({ width: 800, height: 900 })
    await page.goto(`${shop.base}/_profiler/${token}?panel=db`)
    t.ok(await page.locator('#menu a[data-panel="cache"]').isVisible(), '800 px: the menu beside the panel')
    const breaks = await lineBreaks(page, '#db-statements tr[data-statement="8"] pre.sql')
    t.ok(breaks.length > 0, `the JOIN statement wraps (${breaks.length} breaks)`)
    t.same(breaks.filter((at) => !/^[ ,(=.]\|/.test(at)), [], 'only after a space, a comma, a parenthesis, = or a qualified name\'s dot')
    t.same(await brokenNumbers(page), [], 'no number broken across lines')
    // the Grouped table: one row for the N+1's five statements, with its count
    const grouped = await page.locator('#db-groups tbody tr').evaluateAll((rows) => rows.map((row) => `${row.querySelector('[data-count]')?.textContent ?? ''} ${row.querySelector('pre')?.textContent ?? ''}`))
    t.equal(grouped.filter((row) => row.includes('FROM authors WHERE id')).length, 1, 'grouped by shape: the five lookups are one row')
    t.ok(grouped.includes('5 SELECT name FROM authors WHERE id = ?'), 'with their count')
    // the menu badge says what the toolbar says: 11 statements, red for the failure
    t.equal((await page.locator('#menu a[data-panel="db"] .badge').textContent())?.trim(), String(shop.statements))
    t.equal(await page.locator('#menu a[data-panel="db"] .badge').getAttribute('class'), 'badge badge-error')

    // EXPLAIN from a click (a POST of the page's own form)
    await page.setViewportSize({ width: 1280, height: 900 })
    await page.goto(`${shop.base}/_profiler/${token}?panel=db`)
    const [explained] = await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'POST' && response.url().includes('/explain/')),
      page.locator('#db-statements tr[data-statement="8"] form.explain button').click()
    ])
    t.equal(explained.status(), 200, 'the EXPLAIN button answers 200')
    await page.waitForSelector('#explain-plan')
    t.match(await page.locator('#explain-plan').innerText(), /SCAN|SEARCH/, 'with SQLite\'s plan')
    t.match(await page.locator('#explained-statement').textContent() ?? '', 'JOIN authors')
    t.same(severe(await axe(page)), [], 'the EXPLAIN page: no serious or critical violation')
    t.equal((await landmarks(page)).h1, 1)
    t.same(problems, [], 'no console error, no CSP violation')
  })

  t.test('"Record this browser\'s requests" from a click, under helmet\'s policy: on, recorded, off', async (t) => {
    const app = await buildApp({ debug: true, profiler: { capture: 'on-demand' } }, { pluginTimeout: 120_000 }, (app) => {
      app.register(helmet)
      app.get('/page', async (_request, reply) => reply.type('text/html; charset=utf-8').send('<!DOCTYPE html><html lang="en"><head><title>Page</title></head><body><main><h1>Page</h1></main></body></html>'))
    })
    t.teardown(() => app.close())
    await app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
    const browser = await launchChromium(t)
    if (browser === undefined) return
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    // the app has no icon: the browser's /favicon.ico is a 404
    const problems = watchConsole(page, (text) => text.startsWith('Failed to load resource: the server responded with a status of 404'))

    const before = await page.goto(`${base}/page`)
    t.equal((await before!.allHeaders())['x-debug-token'], undefined, 'on demand: this browser is not recorded')
    await page.goto(`${base}/_profiler/`)
    const button = page.locator('#capture-switch button')
    t.equal((await button.textContent())?.trim(), 'Record this browser\'s requests (30 minutes)')
    const [switched] = await Promise.all([page.waitForResponse((response) => response.url().endsWith('/_profiler/capture?record=on')), button.click()])
    t.equal(switched.status(), 303, 'the click is answered with the redirect (it was 415: a form\'s body Fastify could not parse)')
    await page.waitForURL(`${base}/_profiler/`)
    t.match(await page.locator('#capture').textContent() ?? '', 'This browser\'s requests: recorded')
    t.same(severe(await axe(page)), [], 'the search page with the switch on: no serious or critical violation')

    const after = await page.goto(`${base}/page`)
    t.match((await after!.allHeaders())['x-debug-token'], /^[0-9a-f]{6}$/, 'this browser\'s requests are recorded now')
    await page.waitForSelector('.kwdt[data-kwdt-loaded]')
    t.match(await page.locator('[data-kwdt="capture"]').textContent() ?? '', 'on demand (this browser)', 'the toolbar says so')

    await page.goto(`${base}/_profiler/`)
    await Promise.all([page.waitForResponse((response) => response.url().endsWith('/_profiler/capture?record=off')), page.locator('#capture-switch button').click()])
    await page.waitForURL(`${base}/_profiler/`)
    t.match(await page.locator('#capture').textContent() ?? '', 'recorded only when asked', 'switched off')
    t.equal((await (await page.goto(`${base}/page`))!.allHeaders())['x-debug-token'], undefined, 'and no longer recorded')
    t.same(problems, [])
  })
}
