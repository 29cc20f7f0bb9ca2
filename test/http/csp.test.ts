import t from 'tap'
import helmet from '@fastify/helmet'
import { allowNonces, allowNoncesInHeader } from '../../src/http/csp.js'
import { buildApp } from '../helpers.js'

const nonces = { script: 'S1', style: 'T2' }
const host = 'example.test'
const PAGE = '<html><body><p>page</p></body></html>'

t.test('allowNonces rewrites a policy as Symfony\'s ContentSecurityPolicyHandler does', async (t) => {
  t.equal(
    allowNonces("default-src 'self'; script-src 'self'; style-src 'self'", nonces),
    "default-src 'self'; script-src 'self' 'unsafe-inline' 'nonce-S1'; style-src 'self' 'unsafe-inline' 'nonce-T2'"
  )
  t.equal(
    allowNonces("default-src 'self'", nonces),
    "default-src 'self'; script-src 'self' 'unsafe-inline' 'nonce-S1'; style-src 'self' 'unsafe-inline' 'nonce-T2'",
    'script-src and style-src inherit default-src, then get the nonces'
  )
  t.equal(
    allowNonces("default-src 'none'", nonces),
    "default-src 'none'; script-src 'unsafe-inline' 'nonce-S1'; style-src 'unsafe-inline' 'nonce-T2'",
    "'none' is left out of a list that gains sources"
  )
  t.equal(allowNonces("style-src 'self' 'unsafe-inline'; script-src 'self'", nonces), "style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline' 'nonce-S1'",
    'a directive allowing inline code is left alone (a nonce would forbid the page\'s own)')
  t.equal(allowNonces("script-src 'self' 'unsafe-inline' 'nonce-abc'", nonces), "script-src 'self' 'unsafe-inline' 'nonce-abc' 'nonce-S1'",
    "'unsafe-inline' beside a nonce allows nothing: ours is added")
  t.equal(allowNonces("script-src-elem 'self'; img-src 'self'", nonces), "script-src-elem 'self' 'unsafe-inline' 'nonce-S1'; img-src 'self'", 'the -elem directives too')
  t.equal(allowNonces("img-src 'self'", nonces), "img-src 'self'", 'nothing restricts inline code: unchanged')
  t.equal(allowNonces("script-src 'nonce-S1'", nonces), "script-src 'nonce-S1'", 'a nonce already there is not added twice')
  t.equal(allowNoncesInHeader("script-src 'self', style-src 'self'", nonces), "script-src 'self' 'unsafe-inline' 'nonce-S1', style-src 'self' 'unsafe-inline' 'nonce-T2'", 'several policies')
  t.same(allowNoncesInHeader(["script-src 'self'", "img-src 'self'"], nonces), ["script-src 'self' 'unsafe-inline' 'nonce-S1'", "img-src 'self'"])
})

t.test('helmet\'s policy allows the toolbar\'s nonces; other responses are left alone', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.register(helmet)
    app.get('/page', async (_request, reply) => reply.type('text/html').send(PAGE))
  })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/page', headers: { host } })
  const script = /<script src="\/_wdt\/toolbar.js" nonce="([^"]+)"/.exec(res.body)?.[1]
  t.ok(script !== undefined, 'the toolbar\'s script carries a nonce')
  // changed on purpose: the stylesheet is the script's to fetch, adopted by the toolbar's shadow root
  t.notMatch(res.body, '/_wdt/styles.css', 'no <link> of the toolbar\'s in the page')
  const policy = res.headers['content-security-policy'] as string
  t.match(policy, `script-src 'self' 'unsafe-inline' 'nonce-${script}'`)
  t.match(policy, "style-src 'self' https: 'unsafe-inline'", 'helmet\'s style-src allows inline styles already: left alone')
  t.notMatch(/style-src[^;]*/.exec(policy)?.[0], 'nonce-')
  t.match(policy, "script-src-attr 'none'", 'the rest of the policy is kept')

  const json = await app.inject({ url: '/hello/x', headers: { host } })
  t.notMatch(json.headers['content-security-policy'], 'nonce-', 'a response without kernel-made inline code keeps its policy')

  const second = await app.inject({ url: '/page', headers: { host } })
  t.not(/<script src="\/_wdt\/toolbar.js" nonce="([^"]+)"/.exec(second.body)?.[1], script, 'fresh nonces for every response')
})

t.test('with helmet\'s own nonces (enableCSPNonces), the toolbar uses the page\'s', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.register(helmet, { enableCSPNonces: true })
    app.get('/page', async (_request, reply) => reply.type('text/html').send(PAGE))
  })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/page', headers: { host } })
  const script = /<script src="\/_wdt\/toolbar.js" nonce="([^"]+)"/.exec(res.body)?.[1]
  t.ok(script !== undefined)
  const policy = res.headers['content-security-policy'] as string
  t.equal(policy.split(`'nonce-${script}'`).length, 2, 'the page\'s script nonce, once')
  t.equal(/style-src[^;]*/.exec(policy)?.[0].split("'nonce-").length, 2, 'the page\'s style nonce, once')
})

t.test('the debug error page\'s stylesheet carries a nonce its policy allows; production pages are untouched', async (t) => {
  const strict = { contentSecurityPolicy: { directives: { defaultSrc: ["'self'"], styleSrc: ["'self'"] } } }
  const app = await buildApp({ debug: true, profiler: false }, {}, (app) => { app.register(helmet, strict) })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/boom', headers: { host, accept: 'text/html' } })
  t.equal(res.statusCode, 500)
  const style = /<style nonce="([^"]+)">/.exec(res.body)?.[1]
  t.ok(style, 'the page\'s <style> has a nonce')
  t.match(res.headers['content-security-policy'], `style-src 'self' 'unsafe-inline' 'nonce-${style}'`)
  t.notMatch(res.body, /<script/, 'the debug page has no script')

  const prod = await buildApp({ debug: false }, {}, (app) => { app.register(helmet, strict) })
  t.teardown(() => prod.close())
  const page = await prod.inject({ url: '/boom', headers: { host, accept: 'text/html' } })
  t.notMatch(page.headers['content-security-policy'], 'nonce-', 'production: the policy as the app set it')
})
