/**
 * The mail preview loads nothing remote (issue 36, finding 3), in a real browser (Debian's
 * chromium) with a message sent through a real SMTP server: the profiler's pages send their own
 * strict Content-Security-Policy whatever the app sets (here: a policy that allows images from
 * anywhere), so the message's sandboxed frame fetches none of its remote images (a tracking
 * pixel), stylesheets, fonts or frames — a local HTTP server stands in for "remote" and counts
 * what it is asked. Only that message's "Load remote content" link reloads its frame with a
 * policy that lets them load; its script still never runs.
 */
import t from 'tap'
import { createServer } from 'node:http'
import { once } from 'node:events'
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import nodemailer from 'nodemailer'
import { buildApp } from '../helpers.js'
import { chromiumAvailable, launchChromium } from '../chromium.js'
import { startSmtp } from '../mail/server.js'

/** The "remote" server of the mails' content: counts every request it gets. */
async function startRemote (t: { teardown: (fn: () => unknown) => void }): Promise<{ base: string, hits: string[] }> {
  const hits: string[] = []
  const server = createServer((request, response) => {
    hits.push(request.url ?? '')
    if ((request.url ?? '').endsWith('.css')) response.writeHead(200, { 'content-type': 'text/css' }).end('h1 { color: rgb(1, 2, 3) }')
    else if ((request.url ?? '').endsWith('.gif')) response.writeHead(200, { 'content-type': 'image/gif' }).end(Buffer.from('R0lGODlhAQABAAAAACw=', 'base64'))
    else response.writeHead(200, { 'content-type': 'text/html' }).end('<p>remote</p>')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(async () => { server.closeAllConnections(); await new Promise((resolve) => server.close(resolve)) })
  return { base: `http://127.0.0.1:${(server.address() as { port: number }).port}`, hits }
}

const artifacts = resolve(import.meta.dirname, '../artifacts')

if (chromiumAvailable(t)) {
  mkdirSync(artifacts, { recursive: true })
  t.test('a mail\'s remote images, stylesheets and frames load only when the developer asks, for that mail', async (t) => {
    const smtp = await startSmtp(t)
    const remote = await startRemote(t)
    const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: smtp.port, ignoreTLS: true })
    t.teardown(() => { mailer.close() })
    const html = (n: number): string => `<html><head><link rel="stylesheet" href="${remote.base}/m${n}/style.css"></head><body>
      <h1>Hello ${n}</h1><img id="pixel" src="${remote.base}/m${n}/pixel.gif" width="1" height="1">
      <div style="background-image: url(${remote.base}/m${n}/background.gif)">text</div>
      <iframe src="${remote.base}/m${n}/frame.html"></iframe><script>window.__ran = true</script></body></html>`
    // the first app of the file loads the kernel's modules (TypeScript compiled on the way): slow on a loaded machine
    const app = await buildApp({ debug: true }, { pluginTimeout: 60_000 }, (app) => {
      // whatever the app sets for its own pages: here, images from anywhere
      app.addHook('onRequest', async (_request, reply) => { reply.header('content-security-policy', 'default-src * \'unsafe-inline\'; img-src *') })
      app.get('/send', async () => {
        for (const n of [1, 2]) await mailer.sendMail({ from: 'shop@example.test', to: 'ada@example.test', subject: `Message ${n}`, html: html(n) })
        return 'sent'
      })
    })
    t.teardown(() => app.close())
    await app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
    const sent = await app.inject({ url: '/send' })
    t.equal(smtp.received.length, 2, 'the SMTP server got both messages')
    const token = sent.headers['x-debug-token'] as string

    const browser = await launchChromium(t)
    if (browser === undefined) return
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    const response = await page.goto(`${base}/_profiler/${token}?panel=mail`)
    const policy = response?.headers()['content-security-policy'] ?? ''
    t.match(policy, /^default-src 'none'; script-src 'nonce-[\w-]+'; style-src 'self' 'unsafe-inline'; img-src 'self' data:/, 'the profiler\'s own policy, not the app\'s')
    const frames = page.locator('iframe.mail-preview')
    t.equal(await frames.count(), 2)
    const first = page.frameLocator('iframe.mail-preview >> nth=0')
    await first.locator('h1').waitFor({ state: 'visible' })
    t.equal(await first.locator('h1').textContent(), 'Hello 1', 'the HTML renders')
    // the page and both frames are loaded, with all they were allowed to fetch
    await page.waitForLoadState('load')
    await page.screenshot({ path: join(artifacts, 'mail-remote-blocked.png'), fullPage: true })
    t.same(remote.hits, [], 'the remote server was asked nothing: no pixel, no stylesheet, no background, no frame')

    // the developer asks for the first message's remote content
    const loaded = page.waitForEvent('framenavigated')
    await page.locator('a.mail-remote-load >> nth=0').click()
    await loaded
    await page.frameLocator('iframe.mail-preview >> nth=0').locator('h1').waitFor({ state: 'visible' })
    await page.waitForLoadState('load')
    const reloaded = page.frameLocator('iframe.mail-preview >> nth=0')
    await reloaded.locator('#pixel').evaluate((img: HTMLImageElement) => img.complete ? undefined : new Promise((resolve) => { img.onload = img.onerror = resolve }))
    t.ok(remote.hits.includes('/m1/pixel.gif'), `the first message's image was loaded once asked (${JSON.stringify(remote.hits)})`)
    t.ok(remote.hits.includes('/m1/style.css'), 'and its stylesheet')
    t.notOk(remote.hits.some((hit) => hit.startsWith('/m2/')), 'the other message still loads nothing')
    t.notOk(remote.hits.includes('/m1/frame.html'), 'a frame inside the mail is still refused')
    t.equal(await reloaded.locator('body').evaluate(() => (window as unknown as { __ran?: boolean }).__ran), undefined, 'its script never runs')
    await page.screenshot({ path: join(artifacts, 'mail-remote-loaded.png'), fullPage: true })
  })
}
