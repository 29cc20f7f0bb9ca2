/**
 * dump(): shown in the profiler's dump panel of the request that called it, with the line it was
 * called from; a no-op anywhere else, that never changes a response.
 */
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import ts from 'typescript'
import { profilerOf, buildApp } from '../helpers.js'
import { dump } from '../../index.js'
import { host, page, profiled } from './helpers.js'

t.test('a dump shows its value (inspected to a bounded depth), its label and the line that called it; counted on the toolbar', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/dumps', async () => {
      const order = { id: 7, lines: [{ sku: 'A-1', qty: 2 }], deep: { a: { b: { c: { d: { e: 'too deep' } } } } } }
      const same = dump(order, 'the order')
      order.id = 8 // changed after the dump: the dump shows the value as it was
      dump('<script>alert("dumped")</script>')
      return { same: same === order }
    })
  })
  t.teardown(() => app.close())
  const { res, profile, token } = await profiled(app, { url: '/dumps' })
  t.same(res.json(), { same: true }, 'dump() returns its value')
  const dumps = profile.collected.dump!.dumps
  t.equal(dumps.length, 2)
  t.equal(dumps[0].label, 'the order')
  t.match(dumps[0].text, /id: 7,/, 'inspected at the call')
  t.match(dumps[0].text, /\[Object\]/, 'deeper levels are elided')
  t.notMatch(dumps[0].text, 'too deep')
  t.equal(dumps[0].file, 'test/profiler/dump.test.ts', 'the calling file, relative to the project')
  t.equal(dumps[0].line, 19, 'and its line')
  t.equal(dumps[1].line, 21)

  const panel = (await page(app, `/_profiler/${token}?panel=dump`)).body
  t.notMatch(panel, '<script>alert("dumped")', 'a dumped value is escaped')
  t.match(panel, '&#x27;&lt;script&gt;alert(&quot;dumped&quot;)&lt;/script&gt;&#x27;')
  t.match(panel, /<b class="dump-label">the order<\/b> — <span class="mono dump-where">test\/profiler\/dump\.test\.ts:19<\/span>/)
  t.match(panel, /data-panel="dump" class="active"><span>Dumps<\/span><span class="badge badge-info">2<\/span>/)
  const toolbar = (await page(app, `/_wdt/${token}`)).body
  t.match(toolbar, /data-kwdt-dumps>2</)
  t.match(toolbar, /<tr><th>the order<\/th><td>\{ id: 7, lines: \[ \{ sku: &#x27;A-1&#x27;, qty: 2 \} \]/)
  t.notMatch(toolbar, '<script>alert')
})

t.test('the line of compiled code is mapped to its source', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kernel-dump-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const source = [
    '// an app module, compiled by tsc',
    'interface Order {',
    '  id: number',
    '}',
    '',
    'export function handler (dump: (value: unknown, label?: string) => unknown): Order {',
    '  const order: Order = { id: 7 }',
    '  dump(order, \'compiled\')',
    '  return order',
    '}'
  ].join('\n')
  const compiled = ts.transpileModule(source, { fileName: join(dir, 'handler.ts'), compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, inlineSourceMap: true, inlineSources: true } })
  const file = join(dir, 'handler.mjs')
  writeFileSync(file, compiled.outputText)
  t.ok(compiled.outputText.split('\n').findIndex((line) => line.includes('dump(order')) + 1 < 8, 'the compiled call is on another line')
  const { handler } = await import(pathToFileURL(file).href) as { handler: (d: typeof dump) => unknown }
  const app = await buildApp({ debug: true }, {}, (app) => { app.get('/compiled', async () => handler(dump)) })
  t.teardown(() => app.close())
  // as without --enable-source-maps (tap turns it on): the stack names the compiled file
  process.setSourceMapsEnabled(false)
  t.teardown(() => { process.setSourceMapsEnabled(true) })
  const { profile } = await profiled(app, { url: '/compiled' })
  const [entry] = profile.collected.dump!.dumps
  t.equal(entry.line, 8, 'the TypeScript line')
  t.match(entry.file, /handler\.ts$/)
})

t.test('bounded: 100 dumps a request are kept, the rest counted; a long text is cut', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/many', async () => {
      dump('x'.repeat(200_000))
      dump(Array.from({ length: 100 }, () => 'y'.repeat(5000)))
      for (let i = 0; i < 104; i++) dump(i)
      return 'ok'
    })
  })
  t.teardown(() => app.close())
  const { profile, token } = await profiled(app, { url: '/many' })
  t.equal(profile.collected.dump!.dumps.length, 100)
  t.equal(profile.collected.dump!.dropped, 6)
  const [long, large] = profile.collected.dump!.dumps
  t.ok(long.text.length < 10_100 && long.text.includes('190000 more characters'), 'a long string is cut by inspect')
  t.ok(large.text.length < 66 * 1024 && large.text.endsWith('more characters)'), 'a large value\'s text is cut at 64 KiB')
  t.match((await page(app, `/_profiler/${token}?panel=dump`)).body, '+6 more dumps, not kept')
})

t.test('bounded as Symfony\'s VarDumper: a million keys cost what the bound costs, and what is left out is counted', async (t) => {
  const million: Record<string, number> = {}
  for (let i = 0; i < 1_000_000; i++) million[`k${i}`] = i
  const rows = Array.from({ length: 1000 }, (_value, id) => ({ id, a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9 }))
  const map = new Map(Array.from({ length: 300_000 }, (_value, i) => [i, i]))
  const cyclic: Record<string, unknown> = { name: 'ada' }
  cyclic.self = cyclic
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/huge', async () => {
      dump(million, 'a million keys')
      dump(rows, 'a thousand rows')
      dump(map, 'a large Map')
      dump(cyclic, 'a cycle')
      dump(Object.assign(Object.create(null), { small: { x: 1 } }) as object, 'small')
      return 'ok'
    })
  })
  t.teardown(() => app.close())
  const { profile, token } = await profiled(app, { url: '/huge' })
  const [keys, list, large, cycle, small] = profile.collected.dump!.dumps
  t.equal(keys.items, 250, 'an object: 250 of its keys (maxItemsPerDepth)')
  t.equal(keys.cut, 999_750, 'the others counted')
  t.equal(keys.text.match(/\bk\d+: \d+/g)?.length, 250, 'the text has the 250 kept')
  t.match(keys.text, /k249: 249,\s+\.\.\. 999750 more keys\n\}$/, 'and says how many more there are')
  t.notMatch(keys.text, 'k250:')

  t.equal(list.items, 2500, 'a list of rows: 2500 items in all (maxItems), breadth-first')
  t.equal(list.cut, 750, 'the 750 rows past 250 counted (the 25 rows elided whole are not read)')
  t.equal(list.text.match(/\{ id: \d+/g)?.length, 225, '225 rows with their fields (250 + 225 × 10 = 2500)')
  t.equal(list.text.match(/\[Object\]/g)?.length, 25, 'the last 25 kept rows elided, as inspect elides depth')
  t.match(list.text, '... 750 more items')

  t.equal(large.items, 250)
  t.match(large.text, /^Map\(300000\) \{/, 'a Map keeps its size')
  t.match(large.text, '... 299750 more items')
  t.match(cycle.text, /<ref \*1> \{ name: 'ada', self: \[Circular \*1\] \}/, 'a cycle shown as inspect shows it')
  t.equal(cycle.cut, undefined, 'nothing cut')
  t.match(small.text, '[Object: null prototype] { small: { x: 1 } }', 'what the bound does not reach is inspected as it was')

  const panel = (await page(app, `/_profiler/${token}?panel=dump`)).body
  t.match(panel, '250 items dumped, 999750 left out (at most 2500 a dump, 250 an object, array, Map or Set).')
})

t.test('outside a profiled request a dump records nothing: start-up, the app\'s own timers, after the response', async (t) => {
  let late: Promise<void> | undefined
  const app = await buildApp({ debug: true }, {}, (app) => {
    dump('at start-up')
    app.get('/late', async () => {
      late = new Promise((resolve) => { setTimeout(() => { dump('after the response'); resolve() }, 20) })
      return 'ok'
    })
  })
  t.teardown(() => app.close())
  const timer = setInterval(() => dump('in a timer of the app'), 1)
  t.teardown(() => { clearInterval(timer) })
  const { profile } = await profiled(app, { url: '/late' })
  await late
  t.equal(profile.collected.dump, undefined, 'no dump, no panel')
  const again = await profilerOf(app).storage.load(profile.token)
  t.equal(again!.collected.dump, undefined, 'nor later')
})

t.test('production: dump() never writes to a response; the output is byte for byte the same', async (t) => {
  const routes = (withDump: boolean) => (app: import('fastify').FastifyInstance) => {
    app.get('/page', async (_request, reply) => {
      const value = { user: 'ada', secret: '<b>' }
      if (withDump) dump(value, 'the value')
      return reply.type('text/html; charset=utf-8').send(`<!DOCTYPE html><html><body><p>${value.user}</p></body></html>`)
    })
    app.get('/json', async () => withDump ? dump({ ok: true }) : { ok: true })
  }
  const dumping = await buildApp({ debug: false }, {}, routes(true))
  t.teardown(() => dumping.close())
  const plain = await buildApp({ debug: false }, {}, routes(false))
  t.teardown(() => plain.close())
  for (const url of ['/page', '/json']) {
    const [a, b] = await Promise.all([dumping.inject({ url, headers: { host } }), plain.inject({ url, headers: { host } })])
    t.equal(a.statusCode, b.statusCode, url)
    t.same(a.headers, b.headers, `${url}: the same headers`)
    t.ok(a.rawPayload.equals(b.rawPayload), `${url}: the same bytes`)
  }
})
