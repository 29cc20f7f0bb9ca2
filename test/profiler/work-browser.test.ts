/**
 * The queue and mail panels in a real browser (Debian's chromium), under helmet's
 * Content-Security-Policy, with real Redis, BullMQ and an SMTP server: a page that adds jobs and
 * sends a mail; its toolbar items; its queue panel; the profile of the job a Worker ran; the
 * mail panel with the message's HTML rendered in its sandboxed frame, whose script never runs.
 */
import t from 'tap'
import { copyFileSync, mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import helmet from '@fastify/helmet'
import { Queue, Worker } from 'bullmq'
import nodemailer from 'nodemailer'
import { Redis } from 'ioredis'
import type { Page } from 'playwright-core'
import { buildApp, profilerOf } from '../helpers.js'
import { chromiumAvailable, launchChromium } from '../chromium.js'
import { TestRedis } from '../redis/server.js'
import { startSmtp } from '../mail/server.js'

const artifacts = resolve(import.meta.dirname, '../artifacts')
// UPDATE_README_IMAGES=1 also copies the screenshots the docs show to docs/images/
const readmeImages = resolve(import.meta.dirname, '../../docs/images')

async function shoot (page: Page, name: string, docsName?: string, clip?: { x: number, y: number, width: number, height: number }): Promise<void> {
  const path = join(artifacts, name)
  await page.screenshot(clip === undefined ? { path, fullPage: true } : { path, clip })
  if (docsName !== undefined && process.env.UPDATE_README_IMAGES === '1') {
    mkdirSync(readmeImages, { recursive: true })
    copyFileSync(path, join(readmeImages, docsName))
  }
}

const WELCOME_HTML = `<div style="font-family: Georgia, serif; max-width: 520px; margin: 24px auto; padding: 24px; border: 1px solid #dde3ea; border-radius: 8px">
  <h1 style="color: #1d5fa8; margin-top: 0">Welcome aboard, Ada!</h1>
  <p>Your account <b>ada@example.test</b> is ready. Your first order ships tomorrow.</p>
  <p style="background: #f4f7fb; padding: 12px; border-radius: 4px">Order <b>#1042</b> · 2 items · <b>42.50 €</b></p>
  <p style="color: #667085; font-size: 13px">You receive this because you signed up at shop.example.test.</p>
</div><script>window.__pwned = 'mail'</script>`

if (chromiumAvailable(t)) {
  t.test('queue and mail panels in a browser, under helmet\'s CSP: the job\'s own profile; the HTML preview in its sandboxed frame', async (t) => {
    mkdirSync(artifacts, { recursive: true })
    const redis = await TestRedis.start(t)
    const smtp = await startSmtp(t)
    const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null }
    const emails = new Queue('emails', { connection })
    const invoices = new Queue('invoices', { connection })
    const client = new Redis(redis.port, '127.0.0.1')
    const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: smtp.port, ignoreTLS: true, auth: { user: 'mailer', pass: 's3cret-pass' } })
    const worker = new Worker('emails', async (job) => {
      const user = await client.hgetall(`user:${String(job.data.userId)}`)
      await mailer.sendMail({ from: '"Shop" <shop@example.test>', to: `"${user.name ?? 'Ada'}" <ada@example.test>`, subject: 'Your receipt', text: 'Thank you for your order #1042.' })
      return 'sent'
    }, { connection, autorun: false })
    t.teardown(async () => {
      await worker.close()
      await Promise.all([emails.close(), invoices.close()])
      mailer.close()
      client.disconnect()
    })
    await client.hset('user:7', 'name', 'Ada Lovelace')

    const app = await buildApp({ debug: true }, { pluginTimeout: 120_000 }, (app) => {
      // helmet's defaults: default-src 'self', script-src 'self', img-src 'self' data:, style-src 'self' https: 'unsafe-inline'
      app.register(helmet)
      app.get('/favicon.ico', async (_request, reply) => reply.code(204).send())
      app.get('/signup', { config: { name: 'signup' } }, async (_request, reply) => {
        await emails.add('receipt', { userId: 7, order: 1042, password: 'hunter2' }, { attempts: 3 })
        await invoices.addBulk([{ name: 'render', data: { order: 1042 } }, { name: 'archive', data: { order: 1042, apiKey: 'k-9' }, opts: { delay: 86_400_000 } }])
        await mailer.sendMail({
          from: '"Shop" <shop@example.test>',
          to: '"Ada Lovelace" <ada@example.test>',
          cc: 'sales@example.test',
          bcc: 'audit@example.test',
          subject: 'Welcome aboard, Ada!',
          text: 'Welcome aboard, Ada!\nYour account ada@example.test is ready.',
          html: WELCOME_HTML,
          attachments: [{ filename: 'terms.pdf', content: Buffer.from('%PDF-1.4 the terms') }, { filename: 'order-1042.csv', content: 'sku,qty\nA-1,2\n' }]
        })
        return reply.type('text/html').send('<!DOCTYPE html><html><head><title>Signed up</title></head><body><h1>Welcome!</h1></body></html>')
      })
    })
    t.teardown(() => app.close())
    await app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`

    const browser = await launchChromium(t)
    if (browser === undefined) return
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    const problems: string[] = []
    const blocked: string[] = []
    page.on('console', (message) => {
      if (message.type() !== 'error') return
      // the mail's own script, refused by the frame's sandbox: what the test wants
      if (/Blocked script execution in 'about:srcdoc'/.test(message.text())) blocked.push(message.text())
      else problems.push(message.text())
    })
    page.on('pageerror', (error) => { problems.push(error.message) })

    // the page and its toolbar: the queue and mail items
    await page.goto(`${base}/signup`)
    await page.waitForSelector('.kwdt [data-kwdt="mail"]')
    t.equal((await page.textContent('[data-kwdt-queue]'))?.trim(), '3', 'the toolbar counts the jobs added')
    t.equal((await page.textContent('[data-kwdt-mail]'))?.trim(), '1', 'and the message sent')
    await page.hover('.kwdt [data-kwdt="mail"]')
    await page.locator('.kwdt [data-kwdt="mail"] .kwdt-info').waitFor({ state: 'visible' })
    await shoot(page, 'toolbar-work.png', 'toolbar-work.png', { x: 0, y: 600, width: 1280, height: 200 })
    const token = await page.getAttribute('.kwdt-bar', 'data-kwdt-token')
    t.ok(token !== null)

    // the queue panel
    const response = await page.goto(`${base}/_profiler/${token!}?panel=queue`)
    t.match(response?.headers()['content-security-policy'], "default-src 'none'", 'the profiler page is served under its own policy, not helmet\'s')
    const rows = await page.locator('#queued-jobs tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).slice(2, 4).map((td) => td.textContent?.trim())))
    t.same(rows, [['emails', 'receipt'], ['invoices', 'render'], ['invoices', 'archive']])
    await page.click('#queued-jobs tbody tr:first-child details summary')
    t.match(await page.textContent('#queued-jobs tbody tr:first-child pre') ?? '', '"password": "******"', 'job data masked')
    await shoot(page, 'profiler-queue.png', 'profiler-queue.png')

    // the page sent nothing to Redis itself: BullMQ's own commands (its scripts) are listed apart, uncounted
    t.notOk(await page.evaluate(() => document.querySelector('#menu a[data-panel="cache"] .badge') !== null), 'no Redis count on the Cache tab')
    await page.goto(`${base}/_profiler/${token!}?panel=cache`)
    await page.locator('#cache-library-commands').waitFor({ state: 'visible' })
    t.match(await page.textContent('#cache-library-commands tbody tr:first-child') ?? '', /EVAL/, 'BullMQ\'s scripts, apart')
    t.match(await page.textContent('.card .empty') ?? '', 'No Redis command was sent by the app')
    await shoot(page, 'profiler-cache-library.png')
    await page.goto(`${base}/_profiler/${token!}?panel=queue`)

    // the Worker runs the job: its own profile, reached from the queue panel's link
    const ran = new Promise((resolve) => { worker.on('completed', resolve) })
    worker.run().catch(() => undefined)
    await ran
    await app.kernelProfiler.settled()
    await page.click('#queued-jobs tbody tr:first-child a.job-link')
    await page.waitForSelector('#processed-job')
    t.equal(await page.textContent('#job-outcome'), 'completed', 'the job\'s profile opens on its outcome')
    t.equal(await page.textContent('.summary .url .method'), 'JOB')
    t.equal(await page.getAttribute('#parent', 'href'), `/_profiler/${token!}`, 'linked back to the request that added it')
    const jobMenu = await page.locator('#menu a').evaluateAll((links) => links.map((link) => link.getAttribute('data-panel')))
    for (const panel of ['queue', 'mail', 'cache', 'time']) t.ok(jobMenu.includes(panel), `the job's profile has the ${panel} panel`)
    await shoot(page, 'profiler-job.png', 'profiler-job.png')

    // the mail panel: the HTML rendered in its sandboxed frame, under the page's policy
    await page.goto(`${base}/_profiler/${token!}?panel=mail`)
    const frame = page.frameLocator('iframe.mail-preview')
    await frame.locator('h1').waitFor({ state: 'visible' })
    t.equal(await frame.locator('h1').textContent(), 'Welcome aboard, Ada!', 'the message\'s HTML renders in the frame')
    t.equal(await frame.locator('h1').evaluate((h1) => getComputedStyle(h1).color), 'rgb(29, 95, 168)', 'with its inline styles')
    t.equal(await page.getAttribute('iframe.mail-preview', 'sandbox'), '', 'sandboxed: no script, an opaque origin')
    t.equal(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned), undefined, 'the mail\'s script did not run in the page')
    t.ok(blocked.length > 0, 'and was refused in its frame')
    t.match(await page.textContent('.mail .mail-attachments') ?? '', /terms\.pdf\s*application\/pdf\s*18 bytes/)
    t.equal(await page.getAttribute('.mail a.eml', 'href'), `/_profiler/${token!}/mail/1.eml`)
    await shoot(page, 'profiler-mail.png', 'profiler-mail.png')

    const download = await Promise.all([page.waitForEvent('download'), page.click('.mail a.eml')])
    t.equal(download[0].suggestedFilename(), `${token!}-mail-1.eml`, 'the .eml downloads under its name')
    const jobs = await profilerOf(app).storage.find({ kind: 'job' })
    t.equal(jobs.length, 1)

    // a command: the same panels, recorded with record(); the search lists every kind of unit
    const sentCount = await app.kernelProfiler.record({ kind: 'command', name: 'invoices:remind' }, async () => {
      const overdue = await client.smembers('invoices:overdue')
      await invoices.add('remind', { order: 1042, overdue: overdue.length })
      await mailer.sendMail({ from: '"Shop" <shop@example.test>', to: 'ada@example.test', subject: 'Invoice #1042 is due', text: 'A reminder.' })
      return 1
    })
    t.equal(sentCount, 1, 'record() returns what the command returned')
    await app.kernelProfiler.settled()
    const [command] = await profilerOf(app).storage.find({ kind: 'command' })
    t.ok(command !== undefined, 'the command has a profile')
    await page.goto(`${base}/_profiler/${command!.token}?panel=queue`)
    t.equal((await page.textContent('.summary .url .method'))?.trim(), 'COMMAND')
    t.match(await page.textContent('.summary') ?? '', 'invoices:remind')
    t.same(await page.locator('#queued-jobs tbody tr').evaluateAll((trs) => trs.map((tr) => tr.querySelectorAll('td')[3]?.textContent?.trim())), ['remind'], 'its queue panel lists the job it added')
    await shoot(page, 'profiler-command.png', 'profiler-command.png')
    await page.goto(`${base}/_profiler/?kind=`)
    const listed = await page.locator('#results tbody tr').evaluateAll((trs) => trs.map((tr) => tr.textContent ?? ''))
    t.ok(listed.some((row) => /command[\s\S]*invoices:remind/i.test(row)), 'the search lists the command')
    t.ok(listed.some((row) => /job[\s\S]*receipt/i.test(row)), 'the job')
    t.ok(listed.some((row) => /GET[\s\S]*\/signup/.test(row)), 'and the request')
    await shoot(page, 'profiler-units.png', 'profiler-units.png')
    t.same(problems, [], 'no console errors (no CSP violation)')
  })
}
