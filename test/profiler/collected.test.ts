import t from 'tap'
import { profilerOf, buildApp } from '../helpers.js'
import { page, profiled } from './helpers.js'
import { SECRET } from '../security/app.js'

// what the session, locale and security collectors show, from stored data (a profile is data)
const session = { exists: true, isNew: false, regenerated: true, cookieSet: true, idPrefix: 'a1b2', attributes: { cart: ['book'], userId: 7, csrf_token: '******' }, flashes: { notice: ['Saved!', 'Twice'] } }
const locale = { locale: 'fr', source: 'route' as const, default: 'en', enabled: ['en', 'fr'] }
const security = { firewall: 'main', stateless: false, authenticated: true, user: 'ada', roles: ['ROLE_USER', 'ROLE_ADMIN'], authenticator: 'form_login', accessRule: { path: '^/admin', roles: ['ROLE_ADMIN'] }, decision: 'denied' as const, reason: 'missing ROLE_SUPER' }

t.test('collected data: session and security panels, locale in the request panel, a generic panel for an app collector without a template', async (t) => {
  const app = await buildApp({ debug: true, session: { secret: SECRET }, locale: { enabled: ['en', 'fr'] }, security: { firewalls: [{ name: 'main' }] } }, {}, (app) => {
    // an app's own panel ('cache' is the kernel's Redis panel)
    app.kernel.addCollector({ name: 'hits', label: 'Hits', order: 90, collect: ({ request }) => request.url === '/about' ? { hits: 3, misses: 1, api_token: 'secret-token' } : undefined })
    app.kernel.addCollector({ name: 'feature', label: 'Feature', order: 91, collect: ({ request }) => request.url === '/about' ? { nested: { a: [1, 2] } } : undefined })
  })
  t.teardown(() => app.close())
  const { token, profile } = await profiled(app, { url: '/about' })
  t.same(profile.collected.hits, { hits: 3, misses: 1, api_token: '******' }, 'secrets in an app collector\'s data are masked by the kernel')
  t.same(profile.collected.locale, { locale: 'en', source: 'default', default: 'en', enabled: ['en', 'fr'] })
  await profilerOf(app).storage.save({ ...profile, collected: { ...profile.collected, session, locale, security, request: { ...profile.collected.request!, attributes: profile.collected.request!.attributes.map(([name, value]) => [name, name === '_locale' ? 'fr' : value]) } } })

  const main = await page(app, `/_profiler/${token}`)
  for (const panel of ['session', 'security', 'hits', 'feature']) t.match(main.body, `data-panel="${panel}"`, `${panel} is in the menu`)
  t.notMatch(main.body, 'data-panel="locale"', 'locale has no panel of its own')
  t.match(main.body, /<th>Locale<\/th><td class="mono">fr<\/td>/, 'the request panel shows the locale')
  t.match(main.body, /<table class="kv" id="locale">[\s\S]*<th>source<\/th><td class="mono">route<\/td>/)

  const s = await page(app, `/_profiler/${token}?panel=session`)
  t.equal(s.statusCode, 200)
  t.match(s.body, /<th>regenerated<\/th><td class="mono">true<\/td>/)
  t.match(s.body, /<th>idPrefix<\/th><td class="mono">a1b2<\/td>/)
  t.match(s.body, /<th>cart<\/th><td class="mono">\[&quot;book&quot;\]<\/td>/)
  t.match(s.body, /<th>notice<\/th><td class="mono"><div>Saved!<\/div><div>Twice<\/div><\/td>/)

  const sec = await page(app, `/_profiler/${token}?panel=security`)
  t.match(sec.body, '<span class="status status-error" id="decision">denied</span>')
  t.match(sec.body, /<th>User<\/th><td class="mono">ada<\/td>/)
  t.match(sec.body, /<th>Roles<\/th><td class="mono">ROLE_USER, ROLE_ADMIN<\/td>/)
  t.match(sec.body, /<th>Access rule<\/th><td class="mono">\^\/admin → ROLE_ADMIN<\/td>/)
  t.match(sec.body, /<th>Reason<\/th><td class="mono">missing ROLE_SUPER<\/td>/)

  const hits = await page(app, `/_profiler/${token}?panel=hits`)
  t.match(hits.body, /<th>hits<\/th><td class="mono">3<\/td>/, 'flat data: a key-value table')
  const feature = await page(app, `/_profiler/${token}?panel=feature`)
  t.match(feature.body, /<pre>\{\s+&quot;nested&quot;: \{/, 'nested data: its JSON')

  const other = await profiled(app, { url: '/hello/x' })
  t.equal(other.profile.collected.hits, undefined)
  const none = await page(app, `/_profiler/${other.token}?panel=hits`)
  t.equal(none.statusCode, 404, 'a panel exists only where its data does')
})

t.test('a session panel only where a session exists in the data', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const { token } = await profiled(app, { url: '/about' })
  const res = await page(app, `/_profiler/${token}?panel=session`)
  t.equal(res.statusCode, 404)
  t.match(res.body, `Panel &quot;session&quot; is not available for token &quot;${token}&quot;.`)
})
