/**
 * What a new user meets on the first day: a second registration, several bad options at once,
 * an editor the kernel does not know, the toolbar's requests in the log.
 */
import t from 'tap'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import kernel, { createKernelApp } from '../../index.js'

t.test('a second registration fails with a kernel error', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(kernel)
  await t.rejects(async () => { await app.register(kernel, { debug: true }) }, { code: 'KERNEL_ALREADY_REGISTERED', message: /already registered/ })
  const nested = Fastify()
  t.teardown(() => nested.close())
  await nested.register(kernel)
  await t.rejects(async () => { await nested.register(async (child) => { await child.register(kernel) }) }, { code: 'KERNEL_ALREADY_REGISTERED' }, 'in a child context too')
})

t.test('every bad option of a call is named at once, whatever its group', async (t) => {
  const error = await Fastify().register(kernel, {
    debug: 'yes',
    jsonErrors: 'xml',
    fileLinkFormat: 'notepad',
    trustedHosts: ['('],
    profiler: { storage: 'disk' },
    session: { secret: 'short' },
    locale: { enabled: [] },
    security: { firewalls: [{ name: 'main', htpBasic: true }] }
  } as never).ready().then(() => undefined, (e: unknown) => e as Error & { code: string })
  t.equal(error?.code, 'KERNEL_INVALID_OPTIONS')
  for (const named of ['"debug"', '"jsonErrors"', '"fileLinkFormat"', '"trustedHosts"', '"profiler.storage"', '"session.secret"', '"locale.enabled"', 'htpBasic']) {
    t.match(error?.message, named, `names ${named}`)
  }
})

t.test('fileLinkFormat: an editor\'s name or a format with %f, nothing else', async (t) => {
  await t.rejects(async () => { await Fastify().register(kernel, { fileLinkFormat: 'notepad' }).ready() }, { message: /option "fileLinkFormat" must be an editor's name \(vscode, .*\) or a format with %f and %l, not "notepad"/ })
  for (const accepted of ['vscode', 'vscode&/app/>/home/me/', 'myeditor://%f:%l']) {
    const app = Fastify()
    await app.register(kernel, { debug: true, profiler: false, fileLinkFormat: accepted })
    app.get('/fail', async () => { throw new Error('boom') })
    const page = await app.inject({ url: '/fail', headers: { accept: 'text/html' } })
    t.notMatch(page.body, /href="(vscode|myeditor)?"/, `${accepted}: no empty or bare link`)
    t.match(page.body, accepted.startsWith('vscode') ? 'href="vscode://file/' : 'href="myeditor://', accepted)
    await app.close()
  }
})

t.test('the profiler\'s and toolbar\'s own requests are logged only at debug level', async (t) => {
  for (const level of ['info', 'debug'] as const) {
    const lines: string[] = []
    const stream = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
    const app = await createKernelApp({ kernel: { debug: true }, fastify: { logger: { level, stream } } })
    app.get('/', async (_request, reply) => reply.type('text/html').send('<html><body>page</body></html>'))
    await app.ready()
    const page = await app.inject({ url: '/' })
    const token = String(page.headers['x-debug-token'])
    t.equal((await app.inject({ url: `/_wdt/${token}` })).statusCode, 200)
    t.equal((await app.inject({ url: `/_profiler/${token}` })).statusCode, 200)
    await app.close()
    const own = lines.filter((line) => /\/_(wdt|profiler)/.test(line))
    const pages = lines.filter((line) => line.includes('"url":"/"'))
    t.ok(pages.length > 0, `${level}: the app's own requests are logged`)
    if (level === 'info') t.same(own, [], 'at info: none of the profiler\'s requests')
    else t.ok(own.length > 0, 'at debug: they are')
  }
})
