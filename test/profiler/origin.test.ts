/**
 * Where each call came from: every SQL statement, Redis command, HTTP call, render, dump and
 * stopwatch period shows the app's frame that made it (file:line relative to the project, an
 * editor link), with real servers and the real libraries; never a frame of a dependency or of
 * the kernel, and nothing rather than a wrong frame when the library starts the call on a later
 * tick.
 */
import t from 'tap'
import { tracingChannel } from 'node:diagnostics_channel'
import { readFileSync } from 'node:fs'
import { createServer, get } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import mysql from 'mysql2'
import { createPool } from 'mysql2/promise'
import view from '@fastify/view'
import Handlebars from 'handlebars'
import { createKernelApp, dump } from '../../index.js'
import { OriginCapture } from '../../src/profiler/origin.js'
import type { SpanOrigin } from '../../src/profiler/origin.js'
import { asKernelTraffic } from '../../src/kernel/async-context.js'
import { page, profiled } from './helpers.js'
import { TestRedis } from '../redis/server.js'
import { TestMariaDb } from '../mariadb/server.js'

const FILE = 'test/profiler/origin.test.ts'
const here = fileURLToPath(import.meta.url)
const source = readFileSync(here, 'utf8').split('\n')
/** The line of this file marked `// at: <name>`: the line each call is made on. */
function lineOf (name: string): number {
  const index = source.findIndex((line) => line.endsWith(`// at: ${name}`))
  if (index === -1) throw new Error(`no line marked ${name}`)
  return index + 1
}
const at = (name: string): SpanOrigin => ({ file: FILE, line: lineOf(name) }) as SpanOrigin
const where = (origin: SpanOrigin | undefined): string | undefined => origin === undefined ? undefined : `${origin.file}:${origin.line}`

const redis = await TestRedis.start(t)
const mariadb = await TestMariaDb.start(t)
const upstream = createServer((_request, response) => { response.setHeader('content-type', 'text/plain'); response.end('upstream') })
upstream.listen(0, '127.0.0.1')
await new Promise((resolve) => upstream.once('listening', resolve))
t.teardown(() => { upstream.close() })
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`

t.test('Redis (ioredis, node-redis), SQL (mysql2: a connection, a pool), fetch, a render, a dump and a stopwatch period name the line of the app that made them', async (t) => {
  const ioredis = new Redis(redis.port, '127.0.0.1', { lazyConnect: true })
  await ioredis.connect()
  const nodeRedis = createClient({ url: redis.url })
  nodeRedis.on('error', () => undefined)
  await nodeRedis.connect()
  const pool = createPool({ ...mariadb.connection, connectionLimit: 1 })
  const connection = mysql.createConnection(mariadb.connection)
  t.teardown(async () => { ioredis.disconnect(); await nodeRedis.quit(); await pool.end(); connection.end() })

  const app = await createKernelApp({ kernel: { debug: true, fileLinkFormat: 'vscode' } })
  await app.register(view, { engine: { handlebars: Handlebars.create() }, root: join(import.meta.dirname, 'fixtures/views') })
  app.get('/books', async (request, reply) => {
    await ioredis.get('book:1') // at: ioredis
    await ioredis.pipeline().get('book:2').get('book:3').exec() // at: pipeline
    await nodeRedis.get('book:4') // at: node-redis
    await pool.query('SELECT 1') // at: pool
    // two callers on one pooled connection: the second waits for the first to give it back
    await Promise.all([pool.execute('SELECT ?', [2]), pool.execute('SELECT ?', [3])]) // at: queued
    await new Promise((resolve) => { connection.query('SELECT 4', resolve) }) // at: connection
    await (await fetch(upstreamUrl)).text() // at: fetch
    request.kernel!.stopwatch.start('pricing') // at: stopwatch
    request.kernel!.stopwatch.stop('pricing')
    dump({ id: 1 }) // at: dump
    return reply.view('page.hbs', { greeting: 'Hello' }) // at: render
  })
  t.teardown(() => app.close())
  const { profile, token } = await profiled(app, { url: '/books' })

  const commands = profile.collected.cache!.commands
  t.same(commands.map((c) => where(c.origin)), [where(at('ioredis')), where(at('pipeline')), where(at('pipeline')), where(at('node-redis'))], 'each Redis command: the line that sent it (a pipeline\'s, where it was executed)')
  const statements = profile.collected.db!.statements
  t.same(statements.map((s) => where(s.origin)), [where(at('pool')), where(at('queued')), where(at('queued')), where(at('connection'))],
    'each statement: a pool\'s query starts on a later tick (after the pool handed it a connection), and still names the line that asked for it')
  const [call] = profile.collected.http_client!.calls
  t.equal(where(call.origin), where(at('fetch')), 'fetch(): the caller, not undici\'s 25 frames inside it')
  t.equal(where(profile.collected.templates!.renders[0].origin), where(at('render')), 'the render')
  const dumped = profile.collected.dump!.dumps[0]
  t.equal(`${dumped.file}:${dumped.line}`, where(at('dump')), 'the dump')
  const period = profile.collected.time!.timeline!.rows.find((row) => row.kind === 'app')
  t.equal(period?.origin, where(at('stopwatch')), 'the stopwatch period, on the timeline')

  t.equal(commands[0].origin!.link, `vscode://file/${here}:${lineOf('ioredis')}`, 'an editor link, the kernel\'s fileLinkFormat')
  t.equal(commands[0].origin!.function, undefined, 'an arrow function has no name to show')

  for (const panel of ['cache', 'db', 'http_client', 'templates']) {
    const html = (await page(app, `/_profiler/${token}?panel=${panel}`)).body
    t.match(html, /<span class="origin" data-origin[^>]*><a href="vscode:\/\/file\/[^"]+origin\.test\.ts:\d+">test\/profiler\/origin\.test\.ts:\d+<\/a><\/span>/, `the ${panel} panel shows it as a link`)
  }
})

t.test('the first frame of the app\'s, never one of a dependency or of the kernel; a helper of the app\'s is the app\'s', async (t) => {
  const client = new Redis(redis.port, '127.0.0.1', { lazyConnect: true })
  await client.connect()
  t.teardown(() => { client.disconnect() })
  /** the app's own repository helper */
  const findBook = async (id: number): Promise<string | null> => await client.get(`book:${id}`) // at: helper
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/helper', async () => {
    await findBook(1)
    // the kernel's own traffic (a session store's, login throttling's) is no line of the app's
    await asKernelTraffic({ purpose: 'session' }, () => client.get('sess:x'))
    return 'ok'
  })
  t.teardown(() => app.close())
  const { profile } = await profiled(app, { url: '/helper' })
  const [own, kernels] = profile.collected.cache!.commands
  t.same(own.origin, { ...at('helper'), function: 'findBook' }, 'the helper\'s line, with its name')
  t.equal(kernels.kernel, true)
  t.equal(kernels.origin, undefined, 'the kernel\'s own command has none')
  t.equal(own.origin!.link, undefined, 'no fileLinkFormat, no link')
})

t.test('a call the library starts on a later tick shows no origin rather than a wrong one', async (t) => {
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/later', async () => {
    // node:http publishes its start once the request is flushed, on a later tick
    await new Promise((resolve) => { get(upstreamUrl, (response) => { response.resume(); response.on('end', resolve) }) }) // at: node:http
    return 'ok'
  })
  t.teardown(() => app.close())
  const { profile } = await profiled(app, { url: '/later' })
  const [call] = profile.collected.http_client!.calls
  t.equal(call.status, 200, 'the call is recorded')
  const [major, minor] = process.versions.node.split('.').map(Number) as [number, number]
  if (major > 22 || (major === 22 && minor >= 12)) {
    t.equal(where(call.origin), where(at('node:http')), 'Node 22.12+: taken where the ClientRequest was made (http.client.request.created)')
  } else {
    t.equal(call.origin, undefined, 'Node 20: node:http publishes nothing in the caller\'s stack, so no origin')
  }
})

t.test('a driver that publishes its start by hand (no tracePromise): from its second call on, the stack is taken below the kernel\'s handler', async (t) => {
  const sql = tracingChannel<unknown, { query: string, result?: unknown }>('fastify-kernel:db:query')
  const byHand = (query: string): void => {
    const context: { query: string, result?: unknown } = { query }
    sql.start.publish(context) // at: by hand
    context.result = []
    sql.end.publish(context)
  }
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/by-hand', async () => {
    byHand('SELECT 1')
    return 'ok'
  })
  app.get('/traced', async () => {
    sql.traceSync(() => [], { query: 'SELECT 2' }) // at: traced
    return 'ok'
  })
  t.teardown(() => app.close())
  const first = await profiled(app, { url: '/by-hand' })
  // Node 20-24: taken below diagnostics_channel's runStores, which it never called, so nothing;
  // Node 26's stack reaches the helper itself: its line. Never a wrong line.
  const firstOrigin = first.profile.collected.db!.statements[0].origin
  t.ok(firstOrigin === undefined || where(firstOrigin) === `${FILE}:${lineOf('by hand')}`, 'the first: nothing or the helper\'s line, never a wrong line')
  const second = await profiled(app, { url: '/by-hand' })
  t.equal(where(second.profile.collected.db!.statements[0].origin), `${FILE}:${lineOf('by hand')}`, 'then its line (the app\'s helper that publishes it)')
  const traced = await profiled(app, { url: '/traced' })
  t.equal(where(traced.profile.collected.db!.statements[0].origin), `${FILE}:${lineOf('traced')}`, 'a traced call too')
})

t.test('origins: false captures nothing', async (t) => {
  const client = new Redis(redis.port, '127.0.0.1', { lazyConnect: true })
  await client.connect()
  t.teardown(() => { client.disconnect() })
  const app = await createKernelApp({ kernel: { debug: true, profiler: { origins: false } } })
  let captures: boolean | undefined
  app.get('/off', async (request) => {
    captures = request.kernel!.get('profiler')!.spans.capturesOrigins
    await client.get('a')
    await (await fetch(upstreamUrl)).text()
    return 'ok'
  })
  t.teardown(() => app.close())
  const { profile } = await profiled(app, { url: '/off' })
  t.equal(captures, false)
  t.equal(profile.collected.cache!.commands[0].origin, undefined)
  t.equal(profile.collected.http_client!.calls[0].origin, undefined)
  await t.rejects(createKernelApp({ kernel: { debug: true, profiler: { origins: 'yes' as never } } }), /option "profiler\.origins" must be boolean/)
})

t.test('a capture site learns how many frames its calls need, and never keeps growing for calls with no frame of the app\'s', async (t) => {
  const site = new OriginCapture(function skipped () {})
  t.equal(site.frames, 24, 'before any stack was resolved')
  site.learn(5, 6, 24)
  t.equal(site.frames, 8, 'the app\'s frame 5th: 3 beyond it, 8 at least')
  site.learn(undefined, 8, 8)
  t.equal(site.frames, 16, 'a stack cut short before an app frame: twice as many for the next calls')
  site.learn(12, 16, 16)
  t.equal(site.frames, 15, 'a deeper path found: 3 beyond it')
  site.learn(undefined, 15, 15)
  site.learn(4, 15, 30)
  t.equal(site.frames, 15, 'back to what the deepest path seen needs once an app frame is found again')
  site.learn(undefined, 3, 15)
  t.equal(site.frames, 15, 'a short stack with no app frame (a later tick) changes nothing')

  const fixed = new OriginCapture(function skipped () {}, 4)
  fixed.learn(undefined, 4, 4)
  t.equal(fixed.frames, 4, 'a fixed site stays')

  const first = function first () {}
  const second = function second () {}
  const switching = new OriginCapture(first, undefined, second)
  switching.learn(undefined, 0, 24)
  t.equal(switching.skip, second, 'nothing captured below the first function: the other one from then on')
})
