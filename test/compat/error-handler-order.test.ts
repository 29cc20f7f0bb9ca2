/**
 * An app's own error handler and the kernel, in any registration order: the app's handler keeps
 * answering what it is meant for, and what it throws back (or hands to
 * `app.kernel.handleException`) gets the kernel's pages. Never a silent replacement, and never
 * Fastify's FSTWRN004 warning when the README is followed.
 */
import t from 'tap'
import Fastify from 'fastify'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import kernel, { kernelServerOptions } from '../../index.js'

const warnings: string[] = []
process.on('warning', (warning) => { warnings.push(`${(warning as { code?: string }).code ?? ''} ${warning.message}`) })

const host = 'example.test'
const html = { host, accept: 'text/html' }

type Order = 'kernel, then handler' | 'handler, then kernel' | 'kernel not awaited, then handler'

function appHandler (app: FastifyInstance, handBack: 'throw' | 'handleException') {
  return async function ownErrorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    if (error.statusCode === 418) return reply.code(418).send({ teapot: true })
    if (error.statusCode === 403) return reply.code(403).send({ denied: error.message })
    if (handBack === 'throw') throw error
    return app.kernel.handleException(error, request, reply)
  }
}

async function build (order: Order, handBack: 'throw' | 'handleException', allowErrorHandlerOverride = true): Promise<FastifyInstance> {
  const app = Fastify({ ...kernelServerOptions(), allowErrorHandlerOverride })
  const options = { debug: false }
  if (order === 'kernel, then handler') {
    await app.register(kernel, options)
    app.setErrorHandler(appHandler(app, handBack))
  } else if (order === 'handler, then kernel') {
    app.setErrorHandler(appHandler(app, handBack))
    await app.register(kernel, options)
  } else {
    app.register(kernel, options) // not awaited: the order under test
    app.setErrorHandler(appHandler(app, handBack))
  }
  app.get('/teapot', async () => { throw Object.assign(new Error('short and stout'), { statusCode: 418 }) })
  app.get('/forbidden', async () => { throw Object.assign(new Error('not yours'), { statusCode: 403 }) })
  app.get('/fail', async () => { throw new Error('database down') })
  app.post('/items', { schema: { body: { type: 'object', required: ['name'] } } }, async () => 'created')
  await app.ready()
  return app
}

for (const order of ['kernel, then handler', 'handler, then kernel', 'kernel not awaited, then handler'] as const) {
  for (const handBack of ['throw', 'handleException'] as const) {
    for (const allowErrorHandlerOverride of [true, false]) {
      t.test(`${order}, the app's handler hands back by ${handBack}, allowErrorHandlerOverride ${allowErrorHandlerOverride}`, async (t) => {
        const app = await build(order, handBack, allowErrorHandlerOverride)
        t.teardown(() => app.close())
        const teapot = await app.inject({ url: '/teapot', headers: html })
        t.equal(teapot.statusCode, 418, 'the app\'s handler answers its own errors')
        t.same(teapot.json(), { teapot: true })
        t.same((await app.inject({ url: '/forbidden', headers: html })).json(), { denied: 'not yours' })
        const failed = await app.inject({ url: '/fail', headers: html })
        t.equal(failed.statusCode, 500)
        t.match(failed.body, 'Oops! An Error Occurred', 'what it hands back gets the kernel\'s page')
        const invalid = await app.inject({ method: 'POST', url: '/items', headers: html, payload: {} })
        t.equal(invalid.statusCode, 400)
        t.match(invalid.body, 'The server returned a "400 Bad Request".')
        const miss = await app.inject({ url: '/nope', headers: html })
        t.equal(miss.statusCode, 404, 'routing errors stay the kernel\'s')
        t.match(miss.body, 'The server returned a "404 Not Found".')
      })
    }
  }
}

t.test('an app that sets its handler twice in one scope is still refused by Fastify', async (t) => {
  const app = Fastify({ allowErrorHandlerOverride: false })
  t.teardown(() => app.close())
  await app.register(kernel)
  app.setErrorHandler(async () => 'first')
  t.throws(() => app.setErrorHandler(async () => 'second'), { code: 'FST_ERR_ERROR_HANDLER_ALREADY_SET' })
})

t.test('no FSTWRN004 warning in any of these orders', async (t) => {
  await new Promise((resolve) => setImmediate(resolve))
  t.same(warnings.filter((warning) => warning.includes('FSTWRN004')), [])
})
