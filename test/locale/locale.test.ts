import t from 'tap'
import { createKernelApp } from '../../index.js'
import { ready, call } from '../security/app.js'
import type { KernelOptions, LocaleOptions } from '../../index.js'
import type { LocaleCollected } from '../../src/locale/collector.js'
import { preferredLocale } from '../../src/locale/accept-language.js'

async function localeApp (locale: LocaleOptions, kernel: KernelOptions = { debug: true }) {
  const app = await createKernelApp({ kernel: { ...kernel, locale }, fastify: { logger: false } })
  app.get('/:_locale/contact', async (request) => ({ locale: request.locale, attribute: request.kernel?.attributes._locale }))
  app.get('/:_locale(^(en|fr|de)$)/strict', async (request) => ({ locale: request.locale }))
  app.post('/:_locale/form', async (request) => ({ locale: request.locale }))
  app.get('/plain', async (request) => ({ locale: request.locale }))
  return await ready(app)
}

t.test('_locale from the route sets request.locale and the _locale attribute', async (t) => {
  const app = await localeApp({ default: 'en', enabled: ['en', 'fr'] })
  t.teardown(() => app.close())
  const { res, collected } = await call(app, { url: '/fr/contact' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { locale: 'fr', attribute: 'fr' })
  t.same(collected.locale, { locale: 'fr', source: 'route', default: 'en', enabled: ['en', 'fr'] } satisfies LocaleCollected)
  const plain = await call(app, { url: '/plain', headers: { 'accept-language': 'fr' } })
  t.same(plain.res.json(), { locale: 'en' }, 'Accept-Language is ignored unless enabled')
  t.equal((plain.collected.locale as LocaleCollected).source, 'default')
  t.equal(plain.res.headers['content-language'], undefined, 'no Content-Language unless configured')
})

t.test('a _locale outside the enabled list is a 404, exactly like a failed requirement', async (t) => {
  const app = await localeApp({ default: 'en', enabled: ['en', 'fr'] })
  t.teardown(() => app.close())
  let ran = false
  app.kernel.on('kernel.controller', () => { ran = true })
  const { res, context } = await call(app, { url: '/de/contact', headers: { accept: 'application/json', referer: 'http://example.test/' } })
  t.equal(res.statusCode, 404)
  t.equal(res.json().detail, 'No route found for "GET http://example.test/de/contact" (from "http://example.test/")')
  t.equal(ran, false, 'no controller runs')
  t.equal(context.trace.find((e) => e.listener === 'locale from route')?.outcome, 'threw')
  t.equal(context.trace.find((e) => e.listener === 'firewall'), undefined)
  const page = await call(app, { url: '/de/contact' })
  t.match(page.res.body, 'No routes found for &quot;/de/contact/&quot;.', 'the cause: the trailing-slash retry, as the matcher reports it')
  const post = await call(app, { method: 'POST', url: '/xx/form', headers: { accept: 'application/json' } })
  t.equal(post.res.statusCode, 404)
  const hostile = await call(app, { url: '/%3Cscript%3E/contact' })
  t.equal(hostile.res.statusCode, 404)
  t.notMatch(hostile.res.body, '<script>')
  const strict = await call(app, { url: '/de/strict' })
  t.equal(strict.res.statusCode, 404, 'allowed by the route, not by the enabled list')
  t.equal((await call(app, { url: '/FR/contact' })).res.statusCode, 404, 'case-sensitive, as a requirement')
})

t.test('Accept-Language picks the best enabled locale when asked; Content-Language follows', async (t) => {
  const app = await localeApp({ default: 'en', enabled: ['en', 'fr', 'pt_BR'], fromAcceptLanguage: true, contentLanguage: true }, { debug: false })
  t.teardown(() => app.close())
  const cases: Array<[string | undefined, string, LocaleCollected['source']]> = [
    ['fr-CH, fr;q=0.9, en;q=0.8', 'fr', 'accept-language'],
    ['de, en;q=0.5', 'en', 'accept-language'],
    ['pt-BR', 'pt_BR', 'accept-language'],
    ['de', 'en', 'default'],
    ['*', 'en', 'default'],
    [undefined, 'en', 'default'],
    ['fr;q=0, en;q=0.1', 'en', 'accept-language'],
    [';;;,,,q=x', 'en', 'default'],
    ['x'.repeat(5000), 'en', 'default']
  ]
  for (const [header, expected, source] of cases) {
    const { res, collected } = await call(app, { url: '/plain', headers: header === undefined ? {} : { 'accept-language': header } })
    t.equal(res.statusCode, 200, String(header))
    t.same(res.json(), { locale: expected }, String(header).slice(0, 40))
    t.equal((collected.locale as LocaleCollected).source, source, String(header).slice(0, 40))
    t.equal(res.headers['content-language'], expected.replace('_', '-'))
  }
  const route = await call(app, { url: '/en/contact', headers: { 'accept-language': 'fr' } })
  t.same(route.res.json().locale, 'en', 'the route wins over the header')
  const miss = await call(app, { url: '/nope', headers: { 'accept-language': 'fr' } })
  t.equal(miss.res.statusCode, 404)
  t.equal(miss.res.headers['content-language'], 'fr', 'error pages have a locale too')
})

t.test('preferredLocale', async (t) => {
  t.equal(preferredLocale('en-US,en;q=0.9,fr;q=0.8', ['fr', 'en']), 'en')
  t.equal(preferredLocale('fr;q=0.5, en;q=0.9', ['fr', 'en']), 'en')
  t.equal(preferredLocale('', ['fr']), null)
  t.equal(preferredLocale('es', ['fr']), null)
})

t.test('locale options are validated', async (t) => {
  // invalid on purpose: the types would refuse these at compile time
  const build = (locale: Record<string, unknown>) => createKernelApp({ kernel: { locale: locale as unknown as LocaleOptions }, fastify: { logger: false } })
  await t.rejects(build({}), { code: 'KERNEL_INVALID_OPTIONS', message: /"locale\.enabled" is required/ })
  await t.rejects(build({ enabled: ['en'], default: 'fr' }), { message: /"locale\.default" "fr" is not one of "locale\.enabled" \(en\)/ })
  await t.rejects(build({ enabled: ['en', 'not a locale!'], fromAcceptLanguage: 'yes' }), { message: /locale\.enabled\[1\].*locale\.fromAcceptLanguage/s })
  const app = await build({ enabled: ['de', 'en'] })
  app.get('/x', async (request) => request.locale)
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/x' })).body, 'de', 'the default is the first enabled locale')
})
