/**
 * The templates panel, with the real @fastify/view and handlebars: every render of the app's own
 * view, registered before or after the kernel, at the root or in an encapsulated plugin; the
 * kernel's own pages are never counted.
 */
import t from 'tap'
import { join } from 'node:path'
import Fastify from 'fastify'
import type { FastifyInstance } from 'fastify'
import view from '@fastify/view'
import Handlebars from 'handlebars'
import kernel, { kernelServerOptions } from '../../index.js'
import type { KernelOptions, TemplateRender } from '../../index.js'
import { host, page, profiled } from './helpers.js'
import { createRequire } from 'node:module'

/** handlebars' runtime module, whose `template` the profiler wraps while it runs */
const runtime = createRequire(import.meta.url)('handlebars/dist/cjs/handlebars/runtime.js') as { template: Function }
const PARTIALS = { 'book-row': 'partials/book-row.hbs', price: 'partials/price.hbs', nav: 'partials/nav.hbs' }
const BOOKS = [{ title: 'Dune', price: 9 }, { title: 'Emma', price: 7 }, { title: 'Ulysses', price: 12 }]

const root = join(import.meta.dirname, 'fixtures/views')

/** An app whose own view is registered before or after the kernel, with a route per render API. */
async function appWithView (order: 'before' | 'after', options: KernelOptions = { debug: true }): Promise<FastifyInstance> {
  const app = Fastify(kernelServerOptions())
  const registerView = async (): Promise<void> => { await app.register(view, { engine: { handlebars: Handlebars.create() }, root }) }
  if (order === 'before') await registerView()
  await app.register(kernel, options)
  if (order === 'after') await registerView()
  app.get('/reply-view', async (_request, reply) => reply.view('page.hbs', { greeting: 'Hello' }, { layout: 'layout.hbs' }))
  app.get('/view-async', async (_request, reply) => {
    const items = await Promise.all(['a', 'b'].map((name) => reply.viewAsync('item.hbs', { name })))
    return reply.type('text/html').send(await reply.viewAsync('page.hbs', { greeting: items.join('') }))
  })
  app.get('/instance-view', async function (_request, reply) {
    const html = await this.view('page.hbs', { greeting: 'promise' })
    // the callback form, which @fastify/view's typings leave out
    const again = await new Promise<string>((resolve, reject) => {
      Reflect.apply(this.view, this, ['item.hbs', { name: 'callback' }, (error: Error | null, out?: string) => { error === null ? resolve(out!) : reject(error) }])
    })
    return reply.type('text/html').send(html + again)
  })
  app.get('/missing', async (_request, reply) => reply.view('no-such-template.hbs', {}))
  app.get('/plain', async () => 'no template')
  await app.ready()
  return app
}

const renders = (renders: TemplateRender[] | undefined): Array<[string, string | undefined]> => (renders ?? []).map((r) => [r.template, r.layout])

for (const order of ['before', 'after'] as const) {
  t.test(`@fastify/view registered ${order} the kernel: reply.view, reply.viewAsync and fastify.view (promise and callback) are recorded`, async (t) => {
    const app = await appWithView(order)
    t.teardown(() => app.close())

    const viewed = await profiled(app, { url: '/reply-view' })
    t.match(viewed.res.body, '<!DOCTYPE html><html><body><p>Hello</p>', 'the page renders as ever')
    t.same(renders(viewed.profile.collected.templates?.renders), [['page.hbs', 'layout.hbs']])
    const render = viewed.profile.collected.templates!.renders[0]
    t.ok(render.duration !== null && render.duration > 0 && render.start > 0)
    t.equal(viewed.profile.collected.templates!.totalMs, render.duration)
    t.ok(viewed.profile.collected.time!.timeline!.rows.some((row) => row.kind === 'template' && row.name === 'page.hbs'), 'on the timeline too')

    const asynced = await profiled(app, { url: '/view-async' })
    t.equal(asynced.res.body, '<p>&lt;li&gt;a&lt;/li&gt;\n&lt;li&gt;b&lt;/li&gt;\n</p>\n', 'escaped by handlebars, as ever')
    t.same(renders(asynced.profile.collected.templates?.renders), [['item.hbs', undefined], ['item.hbs', undefined], ['page.hbs', undefined]])

    const instance = await profiled(app, { url: '/instance-view' })
    t.equal(instance.res.body, '<p>promise</p>\n<li>callback</li>\n')
    t.same(renders(instance.profile.collected.templates?.renders), [['page.hbs', undefined], ['item.hbs', undefined]])
    t.ok(instance.profile.collected.templates!.renders.every((r) => r.duration !== null), 'the callback form ends its span')

    const plain = await profiled(app, { url: '/plain' })
    t.equal(plain.profile.collected.templates, undefined, 'no render, no panel')
  })
}

t.test('an encapsulated plugin\'s own view is observed; a failed render is recorded; the kernel\'s error page is not a render of the app', async (t) => {
  const app = await appWithView('after')
  t.teardown(() => app.close())
  const child = Fastify(kernelServerOptions())
  await child.register(kernel, { debug: true })
  await child.register(async function emails (scope) {
    await scope.register(view, { engine: { handlebars: Handlebars.create() }, root, propertyName: 'mail' })
    scope.get('/mail', async function (_request, reply) {
      return reply.type('text/html').send(await reply.mailAsync('item.hbs', { name: 'mail' }) + await this.mail('item.hbs', { name: 'again' }))
    })
  })
  await child.ready()
  t.teardown(() => child.close())
  const mailed = await profiled(child, { url: '/mail' })
  t.equal(mailed.res.body, '<li>mail</li>\n<li>again</li>\n')
  t.same(renders(mailed.profile.collected.templates?.renders), [['item.hbs', undefined], ['item.hbs', undefined]], 'decorators under another propertyName, in a child context')

  const missing = await profiled(app, { url: '/missing', headers: { accept: 'text/html' } })
  t.equal(missing.res.statusCode, 500)
  t.match(missing.res.body, '<!DOCTYPE html>', 'the kernel rendered its debug error page')
  const failed = missing.profile.collected.templates!.renders
  t.same(renders(failed), [['no-such-template.hbs', undefined]], 'only the app\'s render: the error page is the kernel\'s own')
  t.match(failed[0].error, /no-such-template\.hbs/)

  const miss = await profiled(app, { url: '/nowhere', headers: { accept: 'text/html' } })
  t.equal(miss.res.statusCode, 404)
  t.equal(miss.profile.collected.templates, undefined, 'a 404 page renders no template of the app')

  const panel = (await page(app, `/_profiler/${missing.token}?panel=templates`)).body
  t.match(panel, /<span class="mono">no-such-template\.hbs<\/span>[^<]*<[^]*?<div class="level level-error">failed: /)
  t.match(panel, /<a href="[^"]*" aria-current="page" data-panel="templates" class="active"><span>Templates<\/span><span class="badge badge-error">1<\/span>/, 'a failed render marks the menu')
})

t.test('the panel, the toolbar item and its threshold', async (t) => {
  const app = await appWithView('after', { debug: true, profiler: { thresholds: { templates: 0 } } })
  t.teardown(() => app.close())
  const { token } = await profiled(app, { url: '/view-async' })
  const panel = (await page(app, `/_profiler/${token}?panel=templates`)).body
  t.match(panel, /<tr data-template="item\.hbs"><td class="mono">item\.hbs<\/td><td>page<\/td><td>2<\/td>/, 'rendered templates, counted')
  t.match(panel, /<tr data-template="page\.hbs"><td class="mono">page\.hbs<\/td><td>page<\/td><td>1<\/td>/)
  t.equal(panel.match(/<div class="card render" data-render="\d">/g)?.length, 3, 'one card per render call')
  const toolbar = (await page(app, `/_wdt/${token}`)).body
  t.match(toolbar, /<div class="kwdt-item kwdt-slow" data-kwdt="templates">/, 'over the threshold (0 ms): highlighted')
  t.match(toolbar, /data-kwdt-templates>3</)
})

t.test('the page, its layout and every partial, nested under what included them, with counts and times: the app\'s own handlebars instance', async (t) => {
  for (const [name, handlebars] of [['Handlebars.create()', Handlebars.create()], ['the default instance', Handlebars]] as const) {
    const app = Fastify(kernelServerOptions())
    await app.register(kernel, { debug: true, fileLinkFormat: 'vscode' })
    await app.register(view, { engine: { handlebars }, root, options: { partials: PARTIALS } })
    app.get('/books', async (_request, reply) => reply.view('books.hbs', { books: BOOKS }, { layout: 'shop-layout.hbs' }))
    await app.ready()
    const { res, profile, token } = await profiled(app, { url: '/books' })
    t.ok(res.body.startsWith('<!DOCTYPE html><html><body><nav>shop</nav><ul><li>Dune <b>9</b></li>\n<li>Emma <b>7</b></li>\n<li>Ulysses <b>12</b></li>\n</ul>\n'), `${name}: the page renders as ever`)
    const [render] = profile.collected.templates!.renders
    const shape = (runs: typeof render.runs): unknown => runs?.map((run) => [run.name, run.kind, run.count, shape(run.children)])
    t.same(shape(render.runs), [
      ['books.hbs', 'page', 1, [['book-row', 'partial', 3, [['price', 'partial', 3, []]]]]],
      ['shop-layout.hbs', 'layout', 1, [['nav', 'partial', 1, []]]]
    ], `${name}: the page with its partials (a partial's own partial under it), then the layout with its own`)
    const [pageRun, layoutRun] = render.runs!
    t.ok(pageRun.ms >= pageRun.children[0].ms && pageRun.children[0].ms >= pageRun.children[0].children[0].ms, 'a template\'s time includes its partials\'')
    t.ok(pageRun.ms + layoutRun.ms <= render.duration!, 'within the render call')

    const panel = (await page(app, `/_profiler/${token}?panel=templates`)).body
    t.match(panel, /<tr data-template="book-row"><td class="mono">book-row<\/td><td>partial<\/td><td>3<\/td>/, 'the rendered templates: each partial with its count')
    t.match(panel, /<tr class="run d0" data-run="page"><td class="mono">books\.hbs<\/td><td>page<\/td><td>1<\/td>[^]*?<tr class="run d1" data-run="partial"><td class="mono">book-row<\/td><td>partial<\/td><td>3<\/td>[^]*?<tr class="run d2" data-run="partial"><td class="mono">price<\/td>[^]*?<tr class="run d0" data-run="layout"><td class="mono">shop-layout\.hbs<\/td>[^]*?<tr class="run d1" data-run="partial"><td class="mono">nav<\/td>/, 'nested in the render\'s card')
    t.match(panel, /data-partials>7</, '7 partials included')
    await app.close()
  }
  t.not(runtime.template.name, 'observedRuntimeTemplate', 'the last profiler closed: handlebars\' runtime is its own again')
})

t.test('a global layout (@fastify/view\'s option) and a render of the same template outside any request', async (t) => {
  // @fastify/view compiles each render's templates anew, or (production) once, from its cache
  for (const production of [false, true]) {
    const handlebars = Handlebars.create()
    const app = Fastify(kernelServerOptions())
    await app.register(kernel, { debug: true })
    await app.register(view, { engine: { handlebars }, root, layout: 'shop-layout.hbs', production, options: { partials: PARTIALS } })
    app.get('/books', async (_request, reply) => reply.view('books.hbs', { books: BOOKS.slice(0, 1) }))
    app.get('/page', async (_request, reply) => reply.view('page.hbs', { greeting: 'Hello' }))
    await app.ready()
    t.teardown(() => app.close())
    await app.view('books.hbs', { books: [] })
    await app.inject({ url: '/page', headers: { host } })
    const { profile, token } = await profiled(app, { url: '/books' })
    const [render] = profile.collected.templates!.renders
    t.same(render.runs?.map((run) => [run.name, run.kind, run.children.map((c) => [c.name, c.count])]), [
      ['books.hbs', 'page', [['book-row', 1]]],
      ['shop-layout.hbs', 'layout', [['nav', 1]]]
    ], `production: ${String(production)}: the layout @fastify/view adds by itself is named by its file, as Symfony's Twig panel names every template`)
    const panel = (await page(app, `/_profiler/${token}?panel=templates`)).body
    t.match(panel, /<tr class="run d0" data-run="layout"><td class="mono">shop-layout\.hbs<\/td>/, 'the panel names it')
    t.notMatch(panel, /\(the layout\)/)
  }
})

t.test('production: the app\'s view decorators are left as @fastify/view made them', async (t) => {
  const app = Fastify(kernelServerOptions())
  await app.register(kernel, { debug: false })
  await app.register(view, { engine: { handlebars: Handlebars.create() }, root })
  app.get('/page', async (_request, reply) => reply.view('page.hbs', { greeting: 'prod' }))
  const instanceView = app.view
  await app.ready()
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/page', headers: { host } })
  t.equal(res.body, '<p>prod</p>\n')
  t.equal(app.view, instanceView, 'fastify.view untouched')
  t.equal(runtime.template.name, 'template', 'handlebars\' runtime untouched')
  t.equal(Object.getOwnPropertySymbols(app.view).length, 0, 'not marked as observed')
})

declare module 'fastify' {
  interface FastifyInstance { mail: FastifyInstance['view'] }
  interface FastifyReply { mailAsync: FastifyReply['viewAsync'] }
}
