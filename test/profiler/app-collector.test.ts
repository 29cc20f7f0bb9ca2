/**
 * The collector contract, from an app: its own panel and toolbar item, one collector and one
 * template, as the built-in panels are.
 */
import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Collector } from '../../index.js'
import { profilerOf, buildApp } from '../helpers.js'
import { page, profiled } from './helpers.js'

interface CartData { items: string[], total: number }

declare module '../../src/kernel/collector.js' {
  interface CollectedData { cart: CartData }
}
declare module '../../src/kernel/context.js' {
  interface KernelState { cart: CartData }
}

const template = join(mkdtempSync(join(tmpdir(), 'kernel-collector-')), 'cart.hbs')
writeFileSync(template, `{{#*inline "toolbar"}}<div class="kwdt-item" data-kwdt="cart"><a class="kwdt-main" href="{{link}}">Cart <b data-cart-count>{{count}}</b></a></div>{{/inline}}
{{#*inline "panel"}}<h2>Cart</h2><ul id="cart-items">{{#each items}}<li>{{this}}</li>{{/each}}</ul><p id="cart-total">{{total}}</p>{{/inline}}`)

const cartCollector: Collector<CartData> = {
  name: 'cart',
  label: 'Cart',
  order: 90,
  template,
  schema: { type: 'object', required: ['items', 'total'], properties: { items: { type: 'array', items: { type: 'string' } }, total: { type: 'number' } } },
  // the app's own state slot, typed by its declaration: no cast
  collect: ({ context }) => context.get('cart'),
  panel: (data) => ({ items: data.items, total: data.total.toFixed(2) }),
  badge: (data) => ({ text: String(data.items.length), kind: 'info' }),
  toolbar: (data) => data === undefined ? undefined : { count: data.items.length }
}

t.test('an app\'s collector: a panel, a menu badge and a toolbar item, from its data and its template', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.kernel.addCollector(cartCollector)
    app.get('/cart', async (request) => {
      request.kernel!.set('cart', { items: ['book', '<script>alert(1)</script>'], total: 12.5 })
      return 'cart'
    })
  })
  t.teardown(() => app.close())
  const { token, profile } = await profiled(app, { url: '/cart' })
  t.same(profile.collected.cart, { items: ['book', '<script>alert(1)</script>'], total: 12.5 }, 'stored under its name')

  const panel = await page(app, `/_profiler/${token}?panel=cart`)
  t.equal(panel.statusCode, 200)
  t.match(panel.body, '<main id="panel" data-panel="cart">')
  t.match(panel.body, '<li>&lt;script&gt;alert(1)&lt;/script&gt;</li>', 'its data escaped by its template')
  t.match(panel.body, '<p id="cart-total">12.50</p>', 'its panel() model')
  t.match(panel.body, /data-panel="cart" class="active"><span>Cart<\/span><span class="badge badge-info">2<\/span>/, 'in the menu, with its badge')

  const toolbar = await page(app, `/_wdt/${token}`)
  t.match(toolbar.body, '<b data-cart-count>2</b>', 'its toolbar item')
  t.match(toolbar.body, `href="/_profiler/${token}?panel&#x3D;cart"`, 'linking its panel')

  const other = await profiled(app, { url: '/about' })
  t.equal(other.profile.collected.cart, undefined, 'nothing collected: no data')
  t.equal((await page(app, `/_profiler/${other.token}?panel=cart`)).statusCode, 404, 'and no panel')
  t.notMatch((await page(app, `/_wdt/${other.token}`)).body, 'data-kwdt="cart"', 'nor a toolbar item')
})

t.test('stored data of another shape, a failing template or a failing collector costs that panel only', async (t) => {
  const warnings: string[] = []
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.kernel.addCollector(cartCollector)
    app.kernel.addCollector({ name: 'broken', label: 'Broken', order: 95, collect: () => { throw new Error('collector bug') } })
    app.kernel.addCollector({ name: 'badpanel', label: 'Bad panel', order: 96, collect: () => ({ a: 1 }), panel: () => { throw new Error('panel bug') } })
    app.get('/cart', async (request) => { request.kernel!.set('cart', { items: ['book'], total: 1 }); return 'cart' })
    app.log.warn = ((fields: unknown, message: string) => { warnings.push(message) }) as never
  })
  t.teardown(() => app.close())
  const { token, profile } = await profiled(app, { url: '/cart' })
  t.equal(profile.collected.broken, undefined, 'a collector that throws leaves no data')
  t.ok(profile.collected.request, 'and every other panel is still collected')
  t.ok(warnings.some((message) => message.includes('a collector failed')), 'the failure is logged, at warn')
  await profilerOf(app).storage.save({ ...profile, collected: { ...profile.collected, cart: { items: 'not a list', total: null } as never } })
  const cart = await page(app, `/_profiler/${token}?panel=cart`)
  t.equal(cart.statusCode, 200, 'data of another shape: the page still answers')
  t.match(cart.body, "This panel's data cannot be shown")
  const bad = await page(app, `/_profiler/${token}?panel=badpanel`)
  t.equal(bad.statusCode, 200)
  t.match(bad.body, "This panel's data cannot be shown", 'a panel() that throws: the same')
  t.equal((await page(app, `/_wdt/${token}`)).statusCode, 200, 'the toolbar too')
})

t.test('collectors are checked when they are added', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  t.throws(() => app.kernel.addCollector({ name: 'Bad Name', label: 'x', order: 1, collect: () => undefined }), { code: 'KERNEL_INVALID_COLLECTOR' })
  t.throws(() => app.kernel.addCollector({ name: '<script>', label: 'x', order: 1, collect: () => undefined }), { code: 'KERNEL_INVALID_COLLECTOR' })
  t.throws(() => app.kernel.addCollector({ name: 'nocollect', label: 'x', order: 1 } as never), { code: 'KERNEL_INVALID_COLLECTOR' })
  t.throws(() => app.kernel.addCollector({ name: 'request', label: 'x', order: 1, collect: () => undefined }), { code: 'KERNEL_INVALID_COLLECTOR', message: /already registered/ })
})
