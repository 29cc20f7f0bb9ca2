/**
 * The kernel's stages as diagnostics_channel tracing channels: a subscriber (an OpenTelemetry,
 * Sentry or Datadog integration) sees every stage of a request in order, with its outcome and
 * its exception; with no subscriber nothing is published.
 */
import t from 'tap'
import type { Test } from 'tap'
import { AsyncLocalStorage } from 'node:async_hooks'
import { hasSubscribers, tracingChannel } from 'node:diagnostics_channel'
import type { TracingChannelSubscribers } from 'node:diagnostics_channel'
import { setImmediate as tick } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { buildApp, HOST } from '../helpers.js'
import { Stage, StageChannel } from '../../index.js'
import type { StageMessage } from '../../index.js'

const EVENTS = ['start', 'end', 'asyncStart', 'asyncEnd', 'error'] as const

/** Subscribes to every stage's channel; `seen` lists `stage event[ outcome][ error]` in order. */
function subscribeAll (t: Test): { seen: string[], terminated: () => Promise<void> } {
  const seen: string[] = []
  let waiting: (() => void) | undefined
  const handlers = Object.fromEntries(EVENTS.map((name) => [name, (message: StageMessage) => {
    const error = name === 'error' ? ` ${(message.error as Error).message}` : ''
    const outcome = (name === 'end' || name === 'asyncEnd') && message.outcome !== undefined ? ` ${message.outcome}` : ''
    seen.push(`${message.stage} ${name}${outcome}${error}`)
    if (message.stage === Stage.TERMINATE && message.outcome !== undefined && name.endsWith('nd')) waiting?.()
  }])) as unknown as TracingChannelSubscribers<StageMessage>
  for (const name of Object.values(StageChannel)) tracingChannel<unknown, StageMessage>(name).subscribe(handlers)
  t.teardown(() => {
    for (const name of Object.values(StageChannel)) tracingChannel<unknown, StageMessage>(name).unsubscribe(handlers)
  })
  return {
    seen,
    // inject() answers once the response is written; kernel.terminate runs just after
    terminated: async () => { await new Promise<void>((resolve) => { waiting = resolve }) }
  }
}

/** A production app with an async kernel.controller listener and a kernel.request listener that can refuse. */
async function productionApp (): Promise<FastifyInstance> {
  return await buildApp({ debug: false }, {}, (app) => {
    app.kernel.on(Stage.REQUEST, function refuse ({ request }) {
      if (request.headers['x-refuse'] !== undefined) throw new Error('refused by a listener')
    })
    app.kernel.on(Stage.CONTROLLER, async function slowController ({ request }) {
      await tick()
      if (request.headers['x-fail-later'] !== undefined) throw new Error('failed later')
    })
  })
}

async function get (app: FastifyInstance, url: string, terminated: () => Promise<void>, headers: Record<string, string> = {}): Promise<number> {
  const done = terminated()
  const res = await app.inject({ url, headers: { host: HOST, ...headers } })
  await done
  return res.statusCode
}

t.test('the names: one tracing channel per stage, named after it', async (t) => {
  t.same(Object.keys(StageChannel), Object.keys(Stage))
  for (const [key, stage] of Object.entries(Stage)) t.equal(StageChannel[key as keyof typeof Stage], `fastify-kernel:${stage}`)
})

t.test('a subscriber sees every stage of a request, in order, with its outcome', async (t) => {
  const { seen, terminated } = subscribeAll(t)
  // subscribed before the app is built: kernel.response and kernel.terminate get their hooks
  const app = await productionApp()
  t.teardown(() => app.close())

  t.equal(await get(app, '/hello/world', terminated), 200)
  t.same(seen.splice(0), [
    'kernel.request start', 'kernel.request end completed',
    // an async listener: the stage's end comes with its synchronous part, its outcome later
    'kernel.controller start', 'kernel.controller end', 'kernel.controller asyncStart', 'kernel.controller asyncEnd completed',
    'kernel.controller_arguments start', 'kernel.controller_arguments end completed',
    'kernel.response start', 'kernel.response end completed',
    'kernel.finish_request start', 'kernel.finish_request end completed',
    'kernel.terminate start', 'kernel.terminate end completed'
  ])

  t.equal(await get(app, '/boom', terminated), 500)
  t.same(seen.splice(0), [
    'kernel.request start', 'kernel.request end completed',
    'kernel.controller start', 'kernel.controller end', 'kernel.controller asyncStart', 'kernel.controller asyncEnd completed',
    'kernel.controller_arguments start', 'kernel.controller_arguments end completed',
    // the controller threw: the error controller renders its page from the compiled templates,
    // synchronously, and answers: a stage whose listeners are all synchronous ends at `end`
    'kernel.exception start', 'kernel.exception end responded',
    'kernel.response start', 'kernel.response end completed',
    'kernel.finish_request start', 'kernel.finish_request end completed',
    'kernel.terminate start', 'kernel.terminate end completed'
  ])
})

t.test('errors: the router\'s miss, a listener that throws, one that rejects', async (t) => {
  const { seen, terminated } = subscribeAll(t)
  const app = await productionApp()
  t.teardown(() => app.close())

  t.equal(await get(app, '/nope', terminated), 404)
  t.same(seen.splice(0), [
    // the router fails kernel.request with the 404 (event.fail(), no throw): published as its error
    'kernel.request start', 'kernel.request error No route found for "GET http://example.test/nope"', 'kernel.request end threw',
    'kernel.exception start', 'kernel.exception end responded',
    'kernel.response start', 'kernel.response end completed',
    'kernel.finish_request start', 'kernel.finish_request end completed',
    'kernel.terminate start', 'kernel.terminate end completed'
  ])

  t.equal(await get(app, '/hello/world', terminated, { 'x-refuse': '1' }), 500)
  t.same(seen.splice(0, 5), [
    'kernel.request start', 'kernel.request error refused by a listener', 'kernel.request end threw',
    'kernel.exception start', 'kernel.exception end responded'
  ])
  seen.length = 0

  t.equal(await get(app, '/hello/world', terminated, { 'x-fail-later': '1' }), 500)
  t.same(seen.splice(0, 8), [
    'kernel.request start', 'kernel.request end completed',
    'kernel.controller start', 'kernel.controller end',
    'kernel.controller error failed later', 'kernel.controller asyncStart', 'kernel.controller asyncEnd threw',
    'kernel.exception start'
  ])
})

t.test('a store bound to a stage\'s start wraps its listeners, and not the rest of the request', async (t) => {
  const spans = new AsyncLocalStorage<string>()
  const channel = tracingChannel<string, StageMessage>(StageChannel.REQUEST)
  // what an OpenTelemetry subscriber does to make its stage span the active one
  channel.start.bindStore(spans, (message) => `span of ${message.stage}`)
  t.teardown(() => { channel.start.unbindStore(spans) })
  const seenIn: Record<string, string | undefined> = {}
  const app = await buildApp({ debug: false }, {}, (app) => {
    app.kernel.on(Stage.REQUEST, async function listener () {
      await tick()
      seenIn.listener = spans.getStore()
    })
    app.get('/store', async () => {
      seenIn.controller = spans.getStore()
      return 'ok'
    })
  })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/store', headers: { host: HOST } })).statusCode, 200)
  t.same(seenIn, { listener: 'span of kernel.request', controller: undefined })
})

t.test('with no subscriber nothing is published: no channel has subscribers, in production or with the profiler', async (t) => {
  for (const debug of [false, true]) {
    const app = await buildApp({ debug })
    t.equal((await app.inject({ url: '/hello/world', headers: { host: HOST } })).statusCode, 200)
    t.equal((await app.inject({ url: '/nope', headers: { host: HOST } })).statusCode, 404)
    await app.close()
  }
  for (const name of Object.values(StageChannel)) {
    t.equal(tracingChannel(name).hasSubscribers, false, `${name}: no subscriber`)
    for (const event of EVENTS) t.equal(hasSubscribers(`tracing:${name}:${event}`), false, `tracing:${name}:${event}`)
  }
})

t.test('once its subscriber leaves, a stage publishes nothing', async (t) => {
  const app = await productionApp()
  t.teardown(() => app.close())
  const seen: string[] = []
  const handler = (message: unknown): void => { seen.push((message as StageMessage).stage) }
  const start = tracingChannel<unknown, StageMessage>(StageChannel.REQUEST).start
  start.subscribe(handler)
  await app.inject({ url: '/hello/world', headers: { host: HOST } })
  start.unsubscribe(handler)
  await app.inject({ url: '/hello/world', headers: { host: HOST } })
  t.same(seen, ['kernel.request'])
})
