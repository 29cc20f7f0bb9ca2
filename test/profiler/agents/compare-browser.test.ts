/**
 * The search page in a real browser (Debian's chromium): the flags as filters, two profiles
 * checked and compared side by side (the N+1 and its fix: statements 6 → 2, the N+1 gone).
 * Screenshots in test/artifacts/.
 */
import t from 'tap'
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { chromiumAvailable, launchChromium } from '../../chromium.js'
import { scenario } from './scenario.js'
import { axe, severe } from '../browser-checks.js'

const artifacts = resolve(import.meta.dirname, '../../artifacts')

t.test('search by flag, check two profiles, compare them', { skip: !chromiumAvailable(t) }, async (t) => {
  const { base, tokens } = await scenario(t)
  const browser = await launchChromium(t)
  if (browser === undefined) return
  mkdirSync(artifacts, { recursive: true })
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } })
  const problems: string[] = []
  page.on('pageerror', (error) => { problems.push(error.message) })

  await page.goto(`${base}/_profiler/`)
  await page.check('input[name="flag"][value="exception"]')
  await page.click('form.search button[type="submit"]')
  await page.waitForURL(/flag=exception/)
  t.same(await page.$$eval('#results tbody tr td.mono a', (links) => links.map((link) => link.textContent)), [tokens.boom], 'the exception flag finds the exception')
  t.match(await page.textContent('#results tbody tr td[data-flags]'), 'Exception')
  await page.screenshot({ path: join(artifacts, 'profiler-search-flags.png'), fullPage: true })

  await page.goto(`${base}/_profiler/?url=/books`)
  await page.check(`input[name="t"][value="${tokens.books}"]`)
  await page.check(`input[name="t"][value="${tokens.fixed}"]`)
  await page.click('#compare-button')
  await page.waitForURL(/\/_profiler\/compare\?/)
  // the search lists the newest first: the fix is A, the N+1 is B
  t.same(await page.$$eval('tr[data-measure="db-statements"] td', (cells) => cells.map((cell) => cell.textContent)), ['statements', '2', '6', '+4'])
  t.match(await page.textContent('[data-compare-panel="db"] tr[data-shape="n-plus-one-appeared"]'), 'SELECT name FROM authors WHERE id = $1')
  await page.click('text=swap')
  t.same(await page.$$eval('tr[data-measure="db-statements"] td', (cells) => cells.map((cell) => cell.textContent)), ['statements', '6', '2', '-4'], 'swapped: from N+1 to 2')
  t.match(await page.textContent('[data-compare-panel="db"] tr[data-shape="n-plus-one-gone"]'), 'SELECT name FROM authors WHERE id = $1')
  await page.screenshot({ path: join(artifacts, 'profiler-compare.png'), fullPage: true })
  t.same(problems, [], 'no script error')
  // the pages as the profiler's others: no serious or critical axe-core violation, in either theme
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme })
    t.same(severe(await axe(page)), [], `${scheme}: the compare page`)
    await page.goto(`${base}/_profiler/?flag=exception`)
    t.same(severe(await axe(page)), [], `${scheme}: the search page with its flags and compare boxes`)
    await page.goBack()
  }

  const one = await page.goto(`${base}/_profiler/compare?t=${tokens.books}`)
  t.equal(one?.status(), 400, 'one profile is no comparison')
  t.match(await page.textContent('#message'), 'Check two profiles')
})
