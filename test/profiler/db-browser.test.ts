/**
 * The Database panel in a real browser (Debian's chromium) against a real PostgreSQL, under a
 * policy that allows no script but by nonce: the Copy button puts the runnable form on the
 * clipboard, the Explain button shows the plan.
 */
import t from 'tap'
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import helmet from '@fastify/helmet'
import pg from 'pg'
import { buildApp } from '../helpers.js'
import { chromiumAvailable, launchChromium } from '../chromium.js'
import { TestPostgres } from '../postgres/server.js'

const artifacts = resolve(import.meta.dirname, '../artifacts')

if (chromiumAvailable(t)) {
  t.test('Copy and Explain in the Database panel', async (t) => {
    mkdirSync(artifacts, { recursive: true })
    const postgres = await TestPostgres.start(t)
    const pool = new pg.Pool({ connectionString: postgres.url })
    t.teardown(() => pool.end())
    pool.on('error', () => {})
    await pool.query('CREATE TABLE books (id int PRIMARY KEY, title text)')
    const app = await buildApp({ debug: true }, { pluginTimeout: 120_000 }, (app) => {
      // scripts by nonce only: the profiler page's own script must carry the response's
      app.register(helmet, { contentSecurityPolicy: { directives: { scriptSrc: ['\'none\''] } } })
      app.get('/books', async () => (await pool.query('SELECT title FROM books WHERE title = $1 AND id > $2', ['O\'Brien', 0])).rows)
    })
    t.teardown(() => app.close())
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as { port: number }
    const base = `http://localhost:${port}`
    const token = (await fetch(`${base}/books`)).headers.get('x-debug-token')!
    await app.kernelProfiler.profileOf(token)

    const browser = await launchChromium(t)
    if (browser === undefined) return
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
    const page = await context.newPage()
    const blocked: string[] = []
    page.on('console', (message) => { if (/Content Security Policy/i.test(message.text())) blocked.push(message.text()) })
    await page.goto(`${base}/_profiler/${token}?panel=db`)
    await page.locator('details.runnable summary').first().click()
    await page.locator('button.copy').first().click()
    await page.locator('button.copy', { hasText: 'Copied' }).first().waitFor()
    t.equal(await page.evaluate(async () => await navigator.clipboard.readText()), 'SELECT title FROM books WHERE title = \'O\'\'Brien\' AND id > 0', 'Copy put the runnable form on the clipboard')
    t.same(blocked, [], 'the policy blocked nothing')
    await page.screenshot({ path: join(artifacts, 'profiler-db.png'), fullPage: true })

    await page.locator('form.explain button').first().click()
    await page.waitForURL(/\/explain\//)
    t.match(await page.locator('#explain-plan').innerText(), /QUERY PLAN[\s\S]*books/, 'the plan, from PostgreSQL')
    await page.screenshot({ path: join(artifacts, 'profiler-db-explain.png'), fullPage: true })
  })
}
