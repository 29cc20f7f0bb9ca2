/**
 * A status the app set on the reply before an error that carries none of its own is the
 * answer's status, as bare Fastify keeps it (its `lib/error-handler.js` setErrorHeaders and
 * `lib/error-status.js`): `reply.code(400).send(new Error())`, `reply.code(503); throw`, an
 * onError hook's `reply.code(501)`, a hook's `reply.code(401); done(error)`. Only a 4xx/5xx set
 * with `reply.code()` counts (a 302, a 200 or a raw status give 500), and an error's own status
 * wins. The cases are Fastify's own tests' (named below) and @fastify/websocket's; each runs
 * with the kernel first, last and after the routes, with the app's own error handler and without, against the same
 * app without the kernel: Fastify's JSON bodies byte for byte, the kernel's pages with its status.
 */
import t from 'tap'
import Fastify from 'fastify'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, InjectOptions } from 'fastify'
import websocket from '@fastify/websocket'
import kernel, { kernelServerOptions } from '../../index.js'
import type { KernelOptions } from '../../index.js'

const host = 'example.test'
type Order = 'kernel first' | 'kernel last' | 'kernel after the routes'
type Handler = 'no error handler' | 'the app\'s error handler'

/** A hook that sets the reply's status, then fails without a status (Fastify's route-hooks.test.js "option should handle errors with custom status code"). */
function failingHook (status: number) {
  return (_request: FastifyRequest, reply: FastifyReply, doneOrPayload: unknown, done?: (error: Error) => void): void => {
    reply.code(status)
    const fail = done ?? (doneOrPayload as HookHandlerDoneFunction)
    fail(new Error('go away'))
  }
}

/** The app; `options` null: bare Fastify, the same app without the kernel. */
async function build (order: Order, handler: Handler, options: KernelOptions | null): Promise<FastifyInstance> {
  const app = Fastify(kernelServerOptions())
  const withKernel = async (): Promise<void> => { if (options !== null) await app.register(kernel, { profiler: false, ...options }) }
  if (order === 'kernel first') await withKernel()
  if (handler === 'the app\'s error handler') {
    // Fastify's chain: what an app's handler throws goes to the handler below it, the status it set kept
    app.setErrorHandler((error: FastifyError, _request, reply) => {
      if (error.message === 'unprocessable') reply.code(422)
      throw error
    })
  }
  // reply-error.test.js "onRequest hook error handling with external done": a global hook (before
  // the kernel's own, with the kernel last)
  app.addHook('onRequest', (request, reply, done) => {
    if (request.url !== '/global-hook') { done(); return }
    reply.code(400)
    done(new Error('winter is coming'))
  })
  await app.register(websocket)
  if (order === 'kernel last') await withKernel()

  // the three, and @fastify/websocket's hooks.test.js "onError hooks can send a reply and prevent hijacking"
  app.get('/send', async (_request, reply) => reply.code(400).send(new Error('x')))
  app.get('/throw', async (_request, reply) => { reply.code(503); throw new Error('the cache is down') })
  app.get('/sync-throw', (_request, reply) => { reply.status(409); throw new Error('taken') })
  app.get('/on-error', { onError: async (_request, reply) => { reply.code(501) } }, async () => { throw new Error('Fail') })
  // reply.send inside onError throws FST_ERR_SEND_INSIDE_ONERR: the status it set stays, the error is answered
  app.get('/on-error-send', { onError: async (_request, reply) => { await reply.code(501).send('there was an error') } }, async () => { throw new Error('Fail') })
  await app.register(async (scope) => {
    scope.addHook('preValidation', async () => { throw new Error('Fail') })
    scope.addHook('onError', async (_request, reply) => { await reply.code(501).send('there was an error') })
    scope.get('/echo', { websocket: true }, () => { throw new Error('never') })
  })
  // route-hooks.test.js, each hook option
  for (const hook of ['onRequest', 'preParsing', 'preValidation', 'preHandler'] as const) {
    app.post(`/hook/${hook}`, { [hook]: failingHook(401) }, async (request) => request.body)
  }
  // reply-error.test.js "preHandler hook error handling with external code": a scope's hook
  await app.register(async (scope) => {
    scope.addHook('preHandler', (_request, reply, done) => { reply.code(400); done(new Error('winter is coming')) })
    scope.get('/scoped-hook', async () => 'never')
  })
  // the app's own error handler sets it (only with one)
  app.get('/handler-sets', async () => { throw new Error('unprocessable') })
  // what is not kept: an error's own status wins; a status below 400 or not set by reply.code() gives 500
  app.get('/own-status', async (_request, reply) => { reply.code(503); throw Object.assign(new Error('already there'), { statusCode: 409 }) })
  app.get('/error-status-200', async (_request, reply) => { reply.code(400); throw Object.assign(new Error('odd'), { statusCode: 200 }) })
  app.get('/redirect-status', async (_request, reply) => { reply.code(302); throw new Error('no') })
  app.get('/ok-status', async (_request, reply) => { reply.code(200); throw new Error('no') })
  app.get('/raw-status', async (_request, reply) => { reply.raw.statusCode = 503; throw new Error('no') })
  if (order === 'kernel after the routes') await withKernel()
  await app.ready()
  return app
}

const requests: Array<[string, InjectOptions]> = [
  ['reply.code(400).send(error)', { url: '/send' }],
  ['reply.code(503); throw', { url: '/throw' }],
  ['reply.status(409); throw, synchronously', { url: '/sync-throw' }],
  ['onError hook: reply.code(501)', { url: '/on-error' }],
  ['onError hook: reply.code(501).send()', { url: '/on-error-send' }],
  ['a global onRequest hook: reply.code(400); done(error)', { url: '/global-hook' }],
  ...(['onRequest', 'preParsing', 'preValidation', 'preHandler'] as const).map((hook): [string, InjectOptions] =>
    [`route ${hook} option: reply.code(401); done(error)`, { method: 'POST', url: `/hook/${hook}`, payload: { hello: 'world' } }]),
  ['a scope\'s preHandler hook: reply.code(400); done(error)', { url: '/scoped-hook' }],
  ['the app\'s error handler: reply.code(422); throw error', { url: '/handler-sets' }],
  ['an error\'s own status wins', { url: '/own-status' }],
  ['an error\'s status 200 is none', { url: '/error-status-200' }],
  ['reply.code(302): 500', { url: '/redirect-status' }],
  ['reply.code(200): 500', { url: '/ok-status' }],
  ['reply.raw.statusCode = 503: 500', { url: '/raw-status' }]
]

function inject (app: FastifyInstance, request: InjectOptions, accept?: string) {
  return app.inject({ ...request, headers: { host, ...(accept === undefined ? {} : { accept }) } })
}

for (const order of ['kernel first', 'kernel last', 'kernel after the routes'] as const) {
  for (const handler of ['no error handler', 'the app\'s error handler'] as const) {
    t.test(`${order}, ${handler}: Fastify's JSON errors byte for byte`, async (t) => {
      const bare = await build(order, handler, null)
      const exposing = await build(order, handler, { debug: false, format: 'json', jsonErrors: 'fastify', exposeServerErrors: true })
      const debug = await build(order, handler, { debug: true, format: 'json', jsonErrors: 'fastify' })
      const hiding = await build(order, handler, { debug: false, format: 'json', jsonErrors: 'fastify' })
      t.teardown(async () => { await bare.close(); await exposing.close(); await debug.close(); await hiding.close() })
      const kept = new Set<number>()
      for (const [name, request] of requests) {
        const expected = await inject(bare, request)
        if (request.url === '/handler-sets') t.equal(expected.statusCode, handler === 'no error handler' ? 500 : 422, 'bare Fastify keeps what the app\'s handler set')
        kept.add(expected.statusCode)
        for (const [mode, app] of [['production, exposeServerErrors', exposing], ['debug', debug]] as const) {
          const actual = await inject(app, request)
          t.equal(actual.statusCode, expected.statusCode, `${name}, ${mode}: status`)
          t.equal(actual.body, expected.body, `${name}, ${mode}: body`)
          t.equal(actual.headers['content-type'], expected.headers['content-type'], `${name}, ${mode}: content type`)
        }
        const hidden = await inject(hiding, request)
        t.equal(hidden.statusCode, expected.statusCode, `${name}, production: status`)
        if (expected.statusCode < 500) t.equal(hidden.body, expected.body, `${name}, production: a 4xx is Fastify's body`)
        else t.same(hidden.json(), { statusCode: expected.statusCode, error: expected.json().error, message: expected.json().error }, `${name}, production: a 5xx tells its status text`)
      }
      // the reference really keeps them: 400, 401, 409, 501, 503 (and 422 with the handler), besides 500
      t.ok([400, 401, 409, 501, 503].every((status) => kept.has(status)), `bare Fastify answered ${[...kept].join(', ')}`)
      const expected = await bare.injectWS('/echo', { headers: { host } }).then(() => 'upgraded', (error: Error) => error.message)
      t.equal(expected, 'Unexpected server response: 501', '@fastify/websocket\'s case, bare')
      for (const app of [exposing, debug, hiding]) {
        t.equal(await app.injectWS('/echo', { headers: { host } }).then(() => 'upgraded', (error: Error) => error.message), expected, '@fastify/websocket\'s case')
      }
    })

    t.test(`${order}, ${handler}: the kernel's pages answer with the kept status`, async (t) => {
      const bare = await build(order, handler, null)
      const prod = await build(order, handler, { debug: false })
      const debug = await build(order, handler, { debug: true })
      t.teardown(async () => { await bare.close(); await prod.close(); await debug.close() })
      for (const [name, request] of requests) {
        const status = (await inject(bare, request)).statusCode
        const text = (await inject(bare, request)).json().error as string
        const page = await inject(prod, request, 'text/html')
        t.equal(page.statusCode, status, `${name}: production page`)
        t.match(page.body, `The server returned a "${status} ${text}".`)
        const debugPage = await inject(debug, request, 'text/html')
        t.equal(debugPage.statusCode, status, `${name}: debug page`)
        t.match(debugPage.body, `(${status} ${text})</title>`)
        t.match(debugPage.body, `HTTP ${status} ${text}`)
        for (const [app, mode] of [[prod, 'production'], [debug, 'debug']] as const) {
          const problem = await inject(app, request, 'application/problem+json')
          t.equal(problem.statusCode, status, `${name}: ${mode} problem details`)
          t.equal(problem.headers['content-type'], 'application/problem+json')
          t.match(problem.json(), { status, detail: mode === 'debug' ? String : text })
        }
      }
    })
  }
}

t.test('the profile tells the kept status: the response\'s and the exception panel\'s', async (t) => {
  const app = Fastify(kernelServerOptions())
  await app.register(kernel, { debug: true })
  app.get('/throw', async (_request, reply) => { reply.code(503); throw new Error('the cache is down') })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/throw', headers: { host } })
  t.equal(res.statusCode, 503)
  const profile = await app.kernelProfiler.profileOf(res)
  t.equal(profile.statusCode, 503)
  t.match(profile.collected.exception, [{ message: 'the cache is down', statusCode: 503, statusText: 'Service Unavailable', isHttp: false }])
})
