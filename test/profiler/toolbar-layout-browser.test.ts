/**
 * The toolbar in a real browser (Debian's chromium), under @fastify/helmet's policy, on a page
 * that uses most panels (13 items): it fits 1440, 1280, 390 and 320 px wide (every item in the
 * window or in its ⋯ menu, the hide button visible), the page's last line scrolls above it, one
 * tab stop per item with Escape closing a popup, and host pages with hostile CSS change nothing
 * in it while its CSS changes nothing in them.
 */
import t from 'tap'
import { chromiumAvailable, launchChromium } from '../chromium.js'
import { longBody, shopPage, startShop } from './shop.js'
import { focused, shoot, toolbarBox, toolbarItems, watchConsole } from './browser-checks.js'

/** Stylesheets a host page may have: each one broke the toolbar's old light-DOM markup, or would have. */
const HOSTILE: Record<string, string> = {
  'display-flex': 'div { display: flex !important; } span, b, a { display: block !important; }',
  'all-unset': '* { all: unset !important; } html, body { display: block !important; }',
  inherited: 'html, body { font: 700 30px/3 Georgia, serif !important; color: #f0f !important; letter-spacing: 6px !important; text-transform: uppercase !important; text-align: center !important; direction: rtl !important; visibility: visible !important; cursor: wait !important; white-space: pre !important; }',
  tables: 'table, tr, th, td, caption, thead, tbody { display: block !important; border: 6px solid red !important; padding: 20px !important; width: 50px !important; }',
  controls: 'a, button { color: red !important; background: yellow !important; padding: 30px !important; font-size: 40px !important; border: 5px solid blue !important; } :focus { outline: 8px solid lime !important; }',
  hidden: '[hidden] { display: block !important; } .kwdt-info, .kwdt-item, .kwdt-bar { display: block !important; position: static !important; }',
  targeted: 'fastify-kernel-toolbar, .kwdt, #fastify-kernel-toolbar { display: none !important; position: absolute !important; top: 0 !important; height: 400px !important; transform: translateY(-500px) !important; opacity: 0 !important; zoom: 3 !important; }',
  'box-model': '*, *::before, *::after { box-sizing: content-box !important; margin: 10px !important; transition: all 3s !important; line-height: 4 !important; }'
}

// the host page's own elements with the toolbar's class names: the toolbar's rules must not reach them
const LOOKALIKES = '<div class="kwdt-item kwdt-info kwdt-bar" id="lookalike">a page\'s own element</div><button type="button" class="kwdt-hide" id="lookalike-button">page button</button>'

if (chromiumAvailable(t)) {
  t.test('the toolbar fits every width from 320 px, keeps the last line visible, has one tab stop per item, and no page CSS reaches it', async (t) => {
    const shop = await startShop(t, {
      routes (app) {
        for (const name of Object.keys(HOSTILE)) {
          app.get(`/hostile/${name}.css`, async (_request, reply) => reply.type('text/css').send(HOSTILE[name]))
          app.get(`/hostile/${name}`, async (_request, reply) => reply.type('text/html; charset=utf-8').send(shopPage(`Hostile ${name}`, LOOKALIKES + longBody(10), [], `<link rel="stylesheet" href="/hostile/${name}.css">`)))
        }
        app.get('/plain', async (_request, reply) => reply.type('text/html; charset=utf-8').send(shopPage('Plain', LOOKALIKES + longBody(10))))
      }
    })
    const browser = await launchChromium(t)
    if (browser === undefined) return
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } })
    const page = await context.newPage()
    const problems = watchConsole(page)

    // --- every width ---
    const counts: Record<number, { bar: number, menu: number }> = {}
    for (const width of [1440, 1280, 390, 320]) {
      await page.setViewportSize({ width, height: width > 400 ? 900 : 844 })
      await page.goto(`${shop.base}/shop`)
      await page.waitForSelector('.kwdt[data-kwdt-loaded]')
      const items = await toolbarItems(page)
      t.ok(items.length >= 14, `${width} px: the shop's toolbar has its ${items.length} items`)
      for (const name of ['request', 'time', 'memory', 'logs', 'db', 'cache', 'http_client', 'queue', 'mail', 'security', 'locale', 'templates', 'dump', 'cpu-next', 'panels']) {
        t.ok(items.some((item) => item.name === name), `${width} px: ${name} is there`)
      }
      const inBar = items.filter((item) => item.where === 'bar')
      const inMenu = items.filter((item) => item.where === 'menu')
      counts[width] = { bar: inBar.length, menu: inMenu.length }
      for (const item of inBar) {
        t.ok(item.visible && item.left >= 0 && item.right <= width + 0.5 && item.bottom <= (width > 400 ? 900 : 844) + 0.5, `${width} px: ${item.name} is inside the window (${Math.round(item.left)}-${Math.round(item.right)})`)
      }
      const hide = await toolbarBox(page, '[data-kwdt-hide]')
      t.ok(hide !== null && hide.left >= 0 && hide.right <= width + 0.5 && hide.width >= 24, `${width} px: the hide button is visible (${Math.round(hide?.left ?? -1)}-${Math.round(hide?.right ?? -1)})`)
      if (inMenu.length > 0) {
        // the others are in the ⋯ menu: one click, and each is inside the window
        const more = await toolbarBox(page, '[data-kwdt-more-button]')
        t.ok(more !== null && more.right <= width + 0.5, `${width} px: the ⋯ button is inside the window`)
        t.equal((await page.locator('[data-kwdt-more-count]').textContent())?.trim(), String(inMenu.length), `${width} px: it says how many items it holds`)
        await page.click('[data-kwdt-more-button]')
        t.equal(await page.getAttribute('[data-kwdt-more-button]', 'aria-expanded'), 'true')
        for (const item of await toolbarItems(page)) {
          if (item.where !== 'menu') continue
          t.ok(item.visible && item.left >= 0 && item.right <= width + 0.5 && item.top >= 0, `${width} px: ${item.name}, in the menu, is inside the window`)
        }
        await shoot(page, `toolbar-${width}-menu.png`, width === 390 ? { docsName: 'toolbar-390-menu.png' } : {})
        await page.keyboard.press('Escape')
        await page.mouse.click(5, 5)
      }
      await shoot(page, `toolbar-${width}.png`, { docsName: width === 320 ? undefined : `toolbar-${width}.png`, clip: { x: 0, y: (width > 400 ? 900 : 844) - 120, width, height: 120 } })

      // the page's last line scrolls above the bar
      await page.evaluate(() => { window.scrollTo(0, document.documentElement.scrollHeight) })
      const last = await page.locator('#last-line').boundingBox()
      const bar = await toolbarBox(page, '.kwdt-bar')
      t.ok(last !== null && bar !== null && last.y + last.height <= bar.top + 0.5, `${width} px: the last line (bottom ${Math.round((last?.y ?? 0) + (last?.height ?? 0))}) is above the bar (top ${Math.round(bar?.top ?? 0)})`)
    }
    t.equal(counts[1440]!.menu, 0, '1440 px: every item in the bar')
    t.equal(counts[1280]!.menu, 0, '1280 px: every item in the bar (their secondary figures folded)')
    t.ok(counts[390]!.menu > 0 && counts[390]!.bar >= 3, `390 px: ${counts[390]!.bar} items in the bar, ${counts[390]!.menu} in the menu`)
    t.ok(counts[320]!.bar >= 2, `320 px: ${counts[320]!.bar} items in the bar`)

    // hidden, then shown again: the spacer follows, and the choice is remembered
    await page.setViewportSize({ width: 1280, height: 900 })
    await page.goto(`${shop.base}/shop`)
    await page.waitForSelector('.kwdt[data-kwdt-loaded]')
    await page.click('[data-kwdt-hide]')
    t.equal(await page.locator('.kwdt-bar').isVisible(), false, 'hidden')
    t.equal(await page.locator('fastify-kernel-toolbar').evaluate((host) => host.getBoundingClientRect().height), 0, 'its spacer too')
    await page.reload()
    await page.waitForSelector('.kwdt[data-kwdt-loaded]', { state: 'attached' })
    t.equal(await page.locator('.kwdt-bar').isVisible(), false, 'still hidden on the next page')
    await page.click('[data-kwdt-show]')
    t.equal(await page.locator('.kwdt-bar').isVisible(), true, 'shown again')
    t.equal(await page.locator('fastify-kernel-toolbar').evaluate((host) => host.getBoundingClientRect().height), 36)

    // --- the keyboard: one tab stop per item of the bar, then the hide button ---
    await page.goto(`${shop.base}/shop`)
    await page.waitForSelector('.kwdt[data-kwdt-loaded]')
    const barItems = (await toolbarItems(page)).filter((item) => item.where === 'bar').map((item) => item.name)
    await page.locator('#last-line').click()
    const stops: string[] = []
    for (let i = 0; i < barItems.length + 3; i++) {
      await page.keyboard.press('Tab')
      const at = await focused(page)
      if (!at.startsWith('page:') && at !== 'none') stops.push(at)
    }
    t.same(stops.slice(0, barItems.length + 1), [...barItems, 'hide'], 'Tab: each item once, in order, then the hide button; no stop inside a popup')
    // a focused item shows its details; Escape closes them and keeps the focus
    await page.locator('[data-kwdt="db"] > .kwdt-main').focus()
    await page.keyboard.press('Shift+Tab')
    await page.keyboard.press('Tab')
    t.equal(await focused(page), 'db')
    const dbInfo = page.locator('[data-kwdt="db"] > .kwdt-info')
    t.ok(await dbInfo.isVisible(), 'the focused item shows its details')
    t.not(await page.locator('[data-kwdt="db"] > .kwdt-main').evaluate((main) => getComputedStyle(main).outlineStyle), 'none', 'with a visible focus ring')
    await page.keyboard.press('Escape')
    t.notOk(await dbInfo.isVisible(), 'Escape closes them')
    t.equal(await focused(page), 'db', 'the focus stays on the item')
    // the arrow keys reach the links of a popup: the request item's profile link
    await page.locator('[data-kwdt="request"] > .kwdt-main').focus()
    await page.keyboard.press('ArrowUp')
    t.equal(await focused(page), 'request:info', 'ArrowUp moves into the details')
    await page.keyboard.press('Escape')
    t.equal(await focused(page), 'request', 'Escape brings the focus back to the item')
    t.notOk(await page.locator('[data-kwdt="request"] > .kwdt-info').isVisible(), 'and closes the details')
    await page.keyboard.press('ArrowRight')
    t.equal(await focused(page), barItems[1], 'ArrowRight: the next item')
    await shoot(page, 'toolbar-keyboard.png', { clip: { x: 0, y: 640, width: 1280, height: 260 } })

    // the ⋯ menu from the keyboard, at 390 px
    await page.setViewportSize({ width: 390, height: 844 })
    await page.waitForFunction(() => document.querySelector('fastify-kernel-toolbar')?.shadowRoot?.querySelector('[data-kwdt="more"]')?.hasAttribute('hidden') === false)
    await page.locator('[data-kwdt-more-button]').focus()
    t.ok(await page.locator('[data-kwdt-overflow]').isVisible(), 'the focused ⋯ button shows the menu')
    await page.keyboard.press('ArrowUp')
    t.match(await focused(page), /^[a-z_-]+$/, 'ArrowUp moves into the menu\'s items')
    t.not(await focused(page), 'more')
    await page.keyboard.press('Escape')
    t.equal(await focused(page), 'more', 'Escape closes the menu, back on its button')
    t.notOk(await page.locator('[data-kwdt-overflow]').isVisible())

    // --- hostile host CSS: nothing moves in the toolbar; none of its CSS reaches the page ---
    await page.setViewportSize({ width: 1280, height: 900 })
    // each item's place and height (their widths follow their figures, which differ from page to page by a digit or two)
    const geometry = async (): Promise<string[]> => (await toolbarItems(page)).map((item) => `${item.name}@${item.where}:${Math.round(item.top)}-${Math.round(item.bottom)}`)
    const widths = async (): Promise<number[]> => (await toolbarItems(page)).filter((item) => item.name !== 'request').map((item) => item.right - item.left)
    await page.goto(`${shop.base}/plain`)
    await page.waitForSelector('.kwdt[data-kwdt-loaded]')
    const baseline = await geometry()
    const baseWidths = await widths()
    const lookalike = await page.locator('#lookalike').evaluate((element) => { const style = getComputedStyle(element); return `${style.display} ${style.position} ${style.backgroundColor}` })
    const lookalikeButton = await page.locator('#lookalike-button').evaluate((element) => { const style = getComputedStyle(element); return `${style.color} ${style.fontSize}` })
    t.equal(lookalike, 'block static rgba(0, 0, 0, 0)', 'a page\'s element with the toolbar\'s class names keeps its own style')
    t.notMatch(lookalikeButton, /238, 240, 243/, 'and a page\'s button too')
    t.same(await page.evaluate(() => [document.styleSheets.length, document.adoptedStyleSheets.length]), [0, 0], 'the toolbar adds no stylesheet to the page')
    for (const name of Object.keys(HOSTILE)) {
      await page.goto(`${shop.base}/hostile/${name}`)
      await page.waitForSelector('.kwdt[data-kwdt-loaded]', { state: 'attached' })
      t.same(await geometry(), baseline, `${name}: every item where it was`)
      const now = await widths()
      t.ok(now.every((width, i) => Math.abs(width - baseWidths[i]!) <= 16), `${name}: every item as wide as it was (±16 px for its figures; the status item holds the route's name): ${now.map(Math.round).join(' ')} / ${baseWidths.map(Math.round).join(' ')}`)
      const bar = await toolbarBox(page, '.kwdt-bar')
      t.ok(bar !== null && Math.round(bar.height) === 36 && Math.round(bar.bottom) === 900, `${name}: the bar at the bottom, 36 px high`)
      t.equal(await page.evaluate(() => Array.from(document.querySelector('fastify-kernel-toolbar')!.shadowRoot!.querySelectorAll('.kwdt-info')).filter((info) => getComputedStyle(info).display !== 'none').length), 0, `${name}: no popup open by itself`)
      await page.hover('[data-kwdt="memory"] > .kwdt-main')
      const table = await page.locator('[data-kwdt="memory"] > .kwdt-info table').evaluate((element) => `${getComputedStyle(element).display} ${getComputedStyle(element.querySelector('td')!).display} ${getComputedStyle(element.querySelector('td')!).fontSize}`)
      t.equal(table, 'table table-cell 12px', `${name}: a hovered popup's table is a table, in the toolbar's font`)
      if (name === 'display-flex') await shoot(page, 'toolbar-hostile-display-flex.png', { clip: { x: 0, y: 640, width: 1280, height: 260 } })
      if (name === 'all-unset') await shoot(page, 'toolbar-hostile-all-unset.png', { clip: { x: 0, y: 640, width: 1280, height: 260 } })
      await page.mouse.move(5, 5)
    }
    t.same(problems, [], 'no console error, no CSP violation')
  })
}

if (chromiumAvailable(t)) {
  t.test('under a policy without inline styles (style-src \'self\', scripts by nonce): the toolbar styled, the timeline\'s bars drawn, nothing blocked', async (t) => {
    const shop = await startShop(t, { helmet: { contentSecurityPolicy: { directives: { scriptSrc: ['\'self\''], styleSrc: ['\'self\''] } } } })
    const browser = await launchChromium(t)
    if (browser === undefined) return
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    const problems = watchConsole(page)
    const opened = await page.goto(`${shop.base}/shop`)
    const policy = (await opened!.allHeaders())['content-security-policy']
    t.match(policy, /style-src 'self' 'unsafe-inline' 'nonce-[\w-]+'/, 'the page\'s styles: its own files, and the kernel\'s nonce (which switches \'unsafe-inline\' off)')
    await page.waitForSelector('.kwdt[data-kwdt-loaded]')
    const bar = await toolbarBox(page, '.kwdt-bar')
    t.ok(bar !== null && Math.round(bar.height) === 36 && Math.round(bar.bottom) === 800, 'the toolbar is styled: its adopted stylesheet is no inline style')
    // a profiler page under the same policy: its nonced stylesheet, SVG bars (no style attribute)
    const token = (await opened!.allHeaders())['x-debug-token']!
    await page.goto(`${shop.base}/_profiler/${token}?panel=time`)
    const widths = await page.locator('#timeline .wf-row .bar').evaluateAll((bars) => bars.map((bar) => bar.getBoundingClientRect().width))
    t.ok(widths.length > 10 && widths.every((width) => width > 0), `the timeline's ${widths.length} bars are drawn`)
    t.equal(await page.locator('.topbar').evaluate((element) => getComputedStyle(element).display), 'flex', 'the page\'s stylesheet applied')
    t.same(problems, [], 'no CSP violation')
  })
}
