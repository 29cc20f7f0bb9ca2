import t from 'tap'
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { buildApp } from '../helpers.js'
import { chromiumAvailable, launchChromium } from '../chromium.js'

const artifacts = resolve(import.meta.dirname, '../artifacts')

if (chromiumAvailable(t)) {
  t.test('a 404\'s profile in a real browser: panels switch, the timeline and the routing trace render, no console errors', async (t) => {
    mkdirSync(artifacts, { recursive: true })
    const app = await buildApp({ debug: true }, { pluginTimeout: 120_000 })
    t.teardown(() => app.close())
    await app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`

    const miss = await fetch(`${base}/robots.txt`)
    t.equal(miss.status, 404)
    const link = miss.headers.get('x-debug-token-link')
    t.ok(link?.startsWith(`${base}/_profiler/`), 'the 404 links its profile')
    await app.kernelProfiler!.settled()

    const browser = await launchChromium(t)
    if (browser === undefined) return
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    const consoleErrors: string[] = []
    page.on('console', (message) => { if (message.type() === 'error') consoleErrors.push(message.text()) })
    page.on('pageerror', (error) => { consoleErrors.push(error.message) })
    page.on('requestfailed', (request) => { consoleErrors.push(`request failed: ${request.url()}`) })

    const opened = await page.goto(link!)
    t.equal(opened?.status(), 200)
    t.equal(await page.getAttribute('#panel', 'data-panel'), 'exception', 'a failed request opens on its exception')
    t.match(await page.textContent('#exceptions') ?? '', 'No route found for "GET')
    t.match(await page.textContent('#exceptions') ?? '', 'No routes found for "/robots.txt/".')
    t.match(await page.textContent('#status') ?? '', '404')
    await page.screenshot({ path: join(artifacts, 'profiler-exception.png'), fullPage: true })

    for (const panel of ['request', 'routing', 'events', 'logs', 'time']) {
      await Promise.all([page.waitForURL(new RegExp(`panel=${panel}`)), page.click(`#menu a[data-panel="${panel}"]`)])
      t.equal(await page.getAttribute('#panel', 'data-panel'), panel, `the menu switches to ${panel}`)
      t.equal(await page.getAttribute(`#menu a[data-panel="${panel}"]`, 'class'), 'active')
      await page.screenshot({ path: join(artifacts, `profiler-${panel}.png`), fullPage: true })

      if (panel === 'routing') {
        const rows = await page.locator('#route-trace tbody tr').count()
        t.equal(rows, app.kernel.routes.routes.length, 'one trace row per route')
        t.match(await page.textContent('#route-trace') ?? '', 'segment 1 is "robots.txt", the route expects "hello"')
        t.match(await page.textContent('#routing-outcome') ?? '', 'No route matched (404)')
      }
      if (panel === 'events') {
        const stages = await page.locator('#timeline .wf-row.stage .label').allTextContents()
        t.same(stages.map((s) => s.trim()), ['kernel.request', 'kernel.exception', 'kernel.response', 'kernel.finish_request', 'kernel.terminate'], 'the timeline shows the stages in order')
        const bars = page.locator('#timeline .wf-row .bar')
        t.ok(await bars.count() > 5, 'stages and listeners have bars')
        const boxes = await Promise.all((await bars.all()).map((bar) => bar.boundingBox()))
        t.ok(boxes.every((box) => box !== null && box.width > 0), 'every bar is drawn')
        const lefts = boxes.filter((_, i) => i === 0 || true).map((box) => box!.x)
        t.ok(Math.max(...lefts) > Math.min(...lefts), 'bars start at different offsets: a waterfall')
      }
    }

    // the search page lists the profile and links back to it
    await page.goto(`${base}/_profiler/`)
    await page.screenshot({ path: join(artifacts, 'profiler-search.png'), fullPage: true })
    const token = link!.split('/').pop()!
    await Promise.all([page.waitForURL(new RegExp(token)), page.click(`#results a[href="/_profiler/${token}"]`)])
    t.equal(await page.textContent('#token'), token)

    t.same(consoleErrors, [], 'no console errors')
  })
}
