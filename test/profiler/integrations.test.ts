/**
 * Profiler integrations: an app's panel with its own capture registers as the built-in panels
 * do (`profiler.integrations`), a built-in panel switched off (`profiler.panels`) installs
 * nothing, both options are checked with every other, and a secret-named field of an app's
 * panel data is masked.
 */
import t from 'tap'
import { channel } from 'node:diagnostics_channel'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import nodemailer from 'nodemailer'
import type { Collector, ProfilerIntegration } from '../../index.js'
import { REDACTED } from '../../src/http/redact.js'
import { buildApp, profilerOf } from '../helpers.js'
import { host, page, profiled } from './helpers.js'

/** Fastify's options of this file's apps: on a loaded machine the first registration of a process (its modules loaded and compiled) may take more than Fastify's 10 s. */
const fastify = { pluginTimeout: 120_000 }

/** What the app's flag client publishes each time it reads a flag. */
const FLAG_READ = 'test-app:flag-read'
interface FlagRead { flag: string, on: boolean }
interface FlagsData { reads: FlagRead[], apiKey: string, apiToken: string, client: { clientSecret: string, region: string } }

declare module '../../src/kernel/context.js' {
  interface KernelState { flags: FlagRead[] }
}
declare module '../../src/kernel/collector.js' {
  interface CollectedData { flags: FlagsData }
}

/** The app's flag client: it knows nothing of the profiler, it publishes on its channel. */
const flagRead = channel(FLAG_READ)
function isOn (flag: string): boolean {
  const on = flag.startsWith('new-')
  if (flagRead.hasSubscribers) flagRead.publish({ flag, on })
  return on
}

const dir = mkdtempSync(join(tmpdir(), 'kernel-integration-'))
t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
const template = join(dir, 'flags.hbs')
writeFileSync(template, `{{#*inline "toolbar"}}<div class="kwdt-item" data-kwdt="flags"><a class="kwdt-main" href="{{link}}">Flags <b data-flags-count>{{count}}</b></a></div>{{/inline}}
{{#*inline "panel"}}<h2>Feature flags</h2><ul id="flag-reads">{{#each reads}}<li>{{flag}}: {{on}}</li>{{/each}}</ul><p id="flag-client">key {{apiKey}}, token {{apiToken}}, secret {{clientSecret}}, region {{region}}</p>{{/inline}}`)
/** The script of its panel's pages, a file of its own (absolute path: the app's, not the kernel's templates/). */
const FLAGS_SCRIPT = 'document.querySelector(\'#flag-reads\')?.setAttribute(\'data-ready\', \'\')\n'
const script = join(dir, 'flags.js')
writeFileSync(script, FLAGS_SCRIPT)

const flagsCollector: Collector<FlagsData> = {
  name: 'flags',
  label: 'Flags',
  order: 92,
  kinds: 'all',
  deferred: true,
  template,
  collect: ({ context }) => {
    const reads = context.get('flags')
    // the client's settings beside the reads: its secret-named fields are masked by the profiler
    return reads === undefined || reads.length === 0 ? undefined : { reads, apiKey: 'sk-key-987', apiToken: 'sk-live-1234', client: { clientSecret: 'hush-hush', region: 'eu' } }
  },
  // the client's settings shown too: what the panel gets is the masked data
  panel: (data) => ({ reads: data.reads, apiKey: data.apiKey, apiToken: data.apiToken, clientSecret: data.client.clientSecret, region: data.client.region }),
  badge: (data) => ({ text: String(data.reads.length), kind: 'info' }),
  toolbar: (data) => data === undefined ? undefined : { count: data.reads.length }
}

/** The app's integration: its channel, its extension, its panel, a route and a page script of its own. */
const featureFlags: ProfilerIntegration = {
  name: 'flags',
  // read inside a recorded unit only: given that unit's context
  channels: [{ name: FLAG_READ, record: (read: FlagRead, unit) => { unit.get('flags')?.push(read) } }],
  setup: () => ({
    extensions: [{ name: 'flags', begin (_recording, context) { context.set('flags', []) } }],
    collectors: [flagsCollector],
    routes: [{
      method: 'GET',
      path: '/:token/flags.json',
      name: '_profiler_flags',
      async handler (request, reply, kit) {
        const profile = await kit.load((request.params as { token: string }).token)
        return reply.type('application/json; charset=utf-8').send(JSON.stringify(profile?.collected.flags?.reads ?? null))
      }
    }],
    scripts: [{ panel: 'flags', path: '/flags.js', name: '_profiler_flags_script', file: script }]
  })
}

t.test('an app\'s integration: its channel recorded in each unit, through its extension, its panel, toolbar item, route and page script; unsubscribed when the app closes', async (t) => {
  const app = await buildApp({ debug: true, profiler: { integrations: [featureFlags] } }, fastify, (app) => {
    app.get('/checkout', async () => ({ layout: isOn('new-checkout'), dark: isOn('dark-mode') }))
  })
  t.teardown(() => app.close())
  t.ok(flagRead.hasSubscribers, 'subscribed while the profiler is alive')

  isOn('outside-any-unit')
  const { token, profile } = await profiled(app, { url: '/checkout' })
  t.same(profile.collected.flags?.reads, [{ flag: 'new-checkout', on: true }, { flag: 'dark-mode', on: false }], 'the reads of the request, in order, none from outside it')

  const job = await profilerOf(app).record({ kind: 'job', name: 'flags:nightly' }, async (jobToken) => { isOn('new-report'); return jobToken })
  const jobProfile = await profilerOf(app).profileOf(job!)
  t.same(jobProfile.collected.flags?.reads, [{ flag: 'new-report', on: true }], 'a unit recorded with record() has its own')

  const panel = await page(app, `/_profiler/${token}?panel=flags`)
  t.match(panel.body, '<ul id="flag-reads"><li>new-checkout: true</li><li>dark-mode: false</li></ul>', 'its panel, from its template')
  t.match(panel.body, /data-panel="flags" class="active"><span>Flags<\/span><span class="badge badge-info">2<\/span>/, 'in the menu, with its badge')
  t.match((await page(app, `/_wdt/${token}`)).body, '<b data-flags-count>2</b>', 'its toolbar item')

  const loads = '<script src="/_profiler/flags.js"'
  t.match(panel.body, loads, 'its panel\'s page loads its script')
  t.notMatch((await page(app, `/_profiler/${token}?panel=request`)).body, loads, 'another panel\'s page does not')
  t.notMatch((await page(app, `/_profiler/${token}?panel=request`)).body, '/_profiler/flame-graph.js', 'nor the CPU panel\'s flame graph')
  const served = await page(app, '/_profiler/flags.js')
  t.equal(served.statusCode, 200)
  t.equal(served.body, FLAGS_SCRIPT, 'the script served from its file')
  t.match(served.headers['content-type'], 'text/javascript')
  t.equal(served.headers['cache-control'], 'max-age=600, private')
  t.equal((await app.inject({ url: '/_profiler/flags.js', headers: { host }, remoteAddress: '203.0.113.9' })).statusCode, 404, 'a script of the profiler\'s: not for a client it does not admit')

  const route = await page(app, `/_profiler/${token}/flags.json`)
  t.equal(route.statusCode, 200)
  t.same(JSON.parse(route.body), [{ flag: 'new-checkout', on: true }, { flag: 'dark-mode', on: false }], 'its route, reading the stored profile through the kit')
  const outsider = await app.inject({ url: `/_profiler/${token}/flags.json`, headers: { host }, remoteAddress: '203.0.113.9' })
  t.equal(outsider.statusCode, 404, 'a route of the profiler\'s: a client it does not admit gets the ordinary 404')

  await app.close()
  t.notOk(flagRead.hasSubscribers, 'unsubscribed once the last profiler closed')
})

t.test('a secret-named field of an app\'s panel data is masked when the profile is built, whatever its depth', async (t) => {
  const app = await buildApp({ debug: true, profiler: { integrations: [featureFlags] } }, fastify, (app) => {
    // a live collector (the app's own, added to the kernel) is masked the same way
    app.kernel.addCollector({ name: 'billing', label: 'Billing', order: 93, collect: () => ({ plan: 'pro', stripeKey: 'sk_live_abc', owner: { password: 'p4ss', name: 'Ada' } }) })
    app.get('/checkout', async () => ({ layout: isOn('new-checkout') }))
  })
  t.teardown(() => app.close())
  const { profile, token } = await profiled(app, { url: '/checkout' })
  t.same(profile.collected.flags, { reads: [{ flag: 'new-checkout', on: true }], apiKey: REDACTED, apiToken: REDACTED, client: { clientSecret: REDACTED, region: 'eu' } }, 'a deferred collector\'s data')
  // and its panel, as panel authors see it: the secret-named fields show ******, never their values
  const panel = await page(app, `/_profiler/${token}?panel=flags`)
  t.equal(panel.statusCode, 200)
  t.match(panel.body, `<p id="flag-client">key ${REDACTED}, token ${REDACTED}, secret ${REDACTED}, region eu</p>`, 'the panel shows ****** for apiKey, apiToken, clientSecret')
  for (const secret of ['sk-key-987', 'sk-live-1234', 'hush-hush']) t.notMatch(panel.body, secret, `${secret} is on no page`)
  t.same(profile.collected.billing, { plan: 'pro', stripeKey: REDACTED, owner: { password: REDACTED, name: 'Ada' } }, 'a live collector\'s data')
})

/** nodemailer's Mail prototype (of the ES module copy this file imports) and its own sendMail, before any profiler. */
const mailPrototype = Object.getPrototypeOf(nodemailer.createTransport({ jsonTransport: true })) as { sendMail: unknown }
const ownSendMail = mailPrototype.sendMail

/** Whether Mail#sendMail is nodemailer's own (not the profiler's wrapper). */
function sendMailIsOwn (): boolean {
  return mailPrototype.sendMail === ownSendMail
}

t.test('a built-in panel switched off installs nothing: its library unpatched, no panel, no route', async (t) => {
  t.ok(sendMailIsOwn(), 'nodemailer is its own before any profiler')
  const off = await buildApp({ debug: true, profiler: { panels: { mail: false, cpu: false } } }, fastify, (app) => {
    app.get('/send', async () => {
      await nodemailer.createTransport({ jsonTransport: true }).sendMail({ from: 'a@example.test', to: 'b@example.test', subject: 'hi', text: 'hello' })
      return 'sent'
    })
  })
  t.ok(sendMailIsOwn(), 'panels: { mail: false }: nodemailer left untouched while the profiler is alive')
  t.notOk(off.kernel.collectors.some((collector) => collector.name === 'mail' || collector.name === 'cpu'), 'no mail nor cpu collector')
  t.ok(off.kernel.collectors.some((collector) => collector.name === 'db'), 'the others are there')
  const { token, profile } = await profiled(off, { url: '/send' })
  t.equal(profile.collected.mail, undefined, 'the message sent is not recorded')
  t.equal((await page(off, `/_profiler/${token}?panel=mail`)).statusCode, 404, 'no mail panel')
  t.equal((await page(off, `/_profiler/${token}/mail/1.eml`)).statusCode, 404, 'no mail route')
  const arm = await off.inject({ method: 'POST', url: '/_profiler/cpu/next', headers: { host } })
  t.equal(arm.statusCode, 404, 'no cpu route')
  // (the path is then a token the profiler does not know: its "token not found" page, as Symfony's)
  t.notMatch((await page(off, '/_profiler/flame-graph.js')).headers['content-type'], 'javascript', 'nor the flame graph\'s script')
  t.notMatch((await page(off, `/_wdt/${token}`)).body, 'data-kwdt="cpu-next"', 'no "profile the next request" button')
  await off.close()

  // the same app with the panel on: instrumented, recorded, routed
  const on = await buildApp({ debug: true }, fastify, (app) => {
    app.get('/send', async () => {
      await nodemailer.createTransport({ jsonTransport: true }).sendMail({ from: 'a@example.test', to: 'b@example.test', subject: 'hi', text: 'hello' })
      return 'sent'
    })
  })
  t.teardown(() => on.close())
  t.notOk(sendMailIsOwn(), 'with the mail panel on, nodemailer is instrumented')
  const sent = await profiled(on, { url: '/send' })
  t.equal(sent.profile.collected.mail?.messages?.length, 1, 'and the message recorded')
  t.equal((await page(on, `/_profiler/${sent.token}/mail/1.eml`)).statusCode, 200, 'its route there')
  await on.close()
  t.ok(sendMailIsOwn(), 'restored when the app closed')
})

t.test('the options: an unknown panel, a name taken, an integration of the wrong shape: the kernel\'s invalid-options error naming each, in every mode', async (t) => {
  for (const debug of [true, false]) {
    await t.rejects(buildApp({ debug, profiler: { panels: { mial: false } } }), { code: 'KERNEL_INVALID_OPTIONS', message: /option "profiler.panels" names no built-in panel: "mial" \(the built-in ones: request, .*mail.*\)/ }, `debug ${String(debug)}: an unknown panel`)
  }
  await t.rejects(buildApp({ debug: true, profiler: { panels: { mail: 'no' } } } as never), { message: /option "profiler.panels.mail" must be boolean/ })
  await t.rejects(buildApp({ debug: true, profiler: { integrations: [{ ...featureFlags, name: 'mail' }] } }), { message: /option "profiler.integrations\[0\]": "mail" is a built-in panel's name \(switch it off with panels: \{ mail: false \} to replace it\)/ })
  await t.rejects(buildApp({ debug: true, profiler: { integrations: [featureFlags, featureFlags] } }), { message: /option "profiler.integrations\[1\]": "flags" is the name of another integration/ })
  await t.rejects(buildApp({ debug: true, profiler: { integrations: [{ name: 'Flags!' }, 'flags', { name: 'ok', setup: 1 }] } } as never), {
    message: /option "profiler.integrations\[0\]": its name must match \[a-z\]\[a-z0-9_-\]\*, got "Flags!"; option "profiler.integrations\[1\]" must be an integration object \(ProfilerIntegration\), got "flags"; option "profiler.integrations\[2\]": its setup must be a function/
  })
  // a built-in switched off leaves its name to the app's own
  const replaced = await buildApp({ debug: true, profiler: { panels: { mail: false }, integrations: [{ name: 'mail', setup: () => ({ collectors: [{ name: 'mail', label: 'Mail (the app\'s)', order: 49, collect: () => ({ sent: 0 }) }] }) }] } })
  t.equal(replaced.kernel.collectors.find((collector) => collector.name === 'mail')?.label, 'Mail (the app\'s)', 'the app\'s own mail panel in place of the built-in one')
  await replaced.close()
})
