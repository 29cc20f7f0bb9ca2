import t from 'tap'
import { profilerOf, buildApp } from '../helpers.js'
import { host, page } from './helpers.js'
import { Stage } from '../../index.js'
import { SECRET } from '../security/app.js'

const SCRIPT = /<script>alert|<img src=x|<svg onload/

t.test('a <script> in path, Referer and headers is inert on every panel and the search page', async (t) => {
  const app = await buildApp({ debug: true, session: { secret: SECRET }, locale: { enabled: ['en'] }, security: { firewalls: [{ name: 'main' }] } }, {}, (app) => {
    app.kernel.on(Stage.REQUEST, (event) => {
      event.request.log.info({ evil: '<script>alert(14)</script>' }, '<script>alert(15)</script>')
    }, { priority: 200 })
    // an app's collector without a template of its own: the generic panel shows its data
    app.kernel.addCollector({ name: 'hostile', label: '<script>alert(18)</script>', order: 90, collect: () => ({ '<script>alert(12)</script>': '<script>alert(13)</script>' }) })
  })
  t.teardown(() => app.close())
  const hostile = await app.inject({
    url: '/%3Cscript%3Ealert(1)%3C/script%3E/"<img src=x onerror=alert(2)>?q=<script>alert(16)</script>',
    headers: { host, referer: '"><script>alert(3)</script>', 'x-evil': '<script>alert(4)</script>', 'user-agent': '<svg onload=alert(17)>' }
  })
  t.equal(hostile.statusCode, 404)
  const token = String(hostile.headers['x-debug-token'])
  await app.kernelProfiler!.settled()
  const profile = await profilerOf(app).storage.load(token)
  t.ok(profile, 'profiled')
  // request features leave request-derived strings in their data too (a session attribute, a user name)
  await profilerOf(app).storage.save({
    ...profile!,
    collected: {
      ...profile!.collected,
      session: { exists: true, isNew: false, regenerated: false, cookieSet: false, idPrefix: '<script>alert(5)</script>', attributes: { '<script>alert(6)</script>': '<img src=x onerror=alert(7)>' }, flashes: { notice: ['<script>alert(8)</script>'] } },
      security: { firewall: 'main', stateless: false, authenticated: true, user: '<script>alert(9)</script>', roles: ['<svg onload=alert(10)>'], authenticator: null, accessRule: null, decision: 'granted' },
      locale: { locale: '<script>alert(11)</script>', source: 'default', default: 'en', enabled: ['en'] }
    }
  })
  const panels = ['request', 'exception', 'routing', 'events', 'logs', 'time', 'session', 'security', 'hostile']
  for (const panel of panels) {
    const res = await page(app, `/_profiler/${token}?panel=${encodeURIComponent(panel)}`)
    t.equal(res.statusCode, 200, panel)
    t.notMatch(res.body, SCRIPT, `${panel}: nothing executable`)
  }
  const request = await page(app, `/_profiler/${token}?panel=request`)
  t.match(request.body, '&quot;&gt;&lt;script&gt;alert(3)&lt;/script&gt;', 'the Referer is shown, escaped')
  t.match(request.body, '&lt;script&gt;alert(4)&lt;/script&gt;')
  t.match(request.body, '&lt;script&gt;alert(11)&lt;/script&gt;', 'the locale is shown in the request panel')
  const exception = await page(app, `/_profiler/${token}`)
  t.match(exception.body, '(from &quot;&quot;&gt;&lt;script&gt;alert(3)&lt;/script&gt;&quot;)')
  const logs = await page(app, `/_profiler/${token}?panel=logs`)
  t.match(logs.body, '&lt;script&gt;alert(15)&lt;/script&gt;')
  const toolbar = await page(app, `/_wdt/${token}`)
  t.match(toolbar.body, '&lt;script&gt;alert(9)&lt;/script&gt;', 'the toolbar shows the user, escaped')
  t.notMatch(toolbar.body, SCRIPT)

  for (const query of ['', 'url=%3Cscript%3Ealert(1)', 'url=%22%3E%3Cscript%3Ealert(1)%3C/script%3E&ip=%22%3E%3Csvg%20onload%3Dalert(1)%3E&method=%3Cscript%3E&status=%3Cscript%3E']) {
    const search = await page(app, `/_profiler/?${query}`)
    t.equal(search.statusCode, 200, query)
    t.notMatch(search.body, SCRIPT, `search ${query}: nothing executable`)
  }
  const missing = await page(app, '/_profiler/%3Cscript%3Ealert(1)%3C%5Cscript%3E')
  t.equal(missing.statusCode, 200)
  t.match(missing.body, 'Token "&lt;script&gt;alert(1)&lt;\\script&gt;" not found.')
  t.notMatch(missing.body, SCRIPT)
  // %2F is decoded before matching, as in Symfony: a token cannot hold a slash, the path is a 404
  const slashed = await page(app, '/_profiler/%3Cscript%3Ealert(1)%3C%2Fscript%3E')
  t.equal(slashed.statusCode, 404)
  t.notMatch(slashed.body, SCRIPT)
  const badPanel = await page(app, `/_profiler/${token}?panel=%3Cscript%3Ealert(1)%3C/script%3E`)
  t.equal(badPanel.statusCode, 404)
  t.notMatch(badPanel.body, SCRIPT)
})
