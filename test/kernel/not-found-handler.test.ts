/**
 * An app's own not-found handler where the kernel's answers (the root, or a scope without a
 * prefix of its own: Fastify has one handler per prefix) needs `notFoundHandler: false`: without
 * it the app fails at start with the kernel's coded error naming the option, whatever the order,
 * never Fastify's generic "Not found handler already set". A scope with its own prefix keeps its
 * own handler either way, as in bare Fastify.
 */
import t from 'tap'
import Fastify from 'fastify'
import type { FastifyInstance } from 'fastify'
import kernel from '../../index.js'

const headers = { host: 'example.test', accept: 'application/json' }
const refusal = { code: 'KERNEL_NOT_FOUND_HANDLER_SET', message: /notFoundHandler: false/ }
const own = async (): Promise<string> => 'the app\'s own'

async function started (build: (app: FastifyInstance) => Promise<void> | void): Promise<FastifyInstance> {
  const app = Fastify()
  try {
    await build(app)
    await app.ready()
  } catch (error) {
    await app.close().catch(() => undefined)
    throw error
  }
  return app
}

t.test('bare Fastify: one handler per prefix; a scope without a prefix of its own shares its parent\'s', async (t) => {
  await t.rejects(started((app) => {
    app.setNotFoundHandler(own)
    app.register(async (scope) => { scope.setNotFoundHandler(own) })
  }), { message: 'Not found handler already set for Fastify instance with prefix: \'/\'' })
  const prefixed = await started((app) => {
    app.setNotFoundHandler(own)
    app.register(async (scope) => { scope.setNotFoundHandler(async () => 'the scope\'s') }, { prefix: '/docs' })
  })
  t.teardown(() => prefixed.close())
  t.equal((await prefixed.inject('/docs/x')).body, 'the scope\'s')
  t.equal((await prefixed.inject('/x')).body, 'the app\'s own')
})

t.test('the app\'s own handler without notFoundHandler: false fails at start with the kernel\'s coded error, in any order', async (t) => {
  await t.rejects(started(async (app) => {
    app.setNotFoundHandler(own)
    await app.register(kernel)
  }), refusal, 'the app\'s first, then the kernel')
  await t.rejects(started(async (app) => {
    await app.register(kernel)
    app.setNotFoundHandler(own)
  }), refusal, 'the kernel first, then the app\'s')
  await t.rejects(started((app) => {
    app.register(kernel) // not awaited: the app's call runs first
    app.setNotFoundHandler(own)
  }), refusal, 'the kernel not awaited, then the app\'s')
  await t.rejects(started(async (app) => {
    await app.register(async (scope) => { scope.setNotFoundHandler(own) })
    await app.register(kernel)
  }), refusal, 'a scope without a prefix, before the kernel')
  await t.rejects(started(async (app) => {
    await app.register(kernel)
    await app.register(async (scope) => { scope.setNotFoundHandler(own) })
  }), refusal, 'a scope without a prefix, after the kernel')
  const error = await started(async (app) => {
    await app.register(kernel)
    app.setNotFoundHandler(own)
  }).catch((error: unknown) => error as Error)
  t.match(error, { message: /^fastify-kernel: the app sets its own not-found handler where the kernel's answers \(Not found handler already set for Fastify instance with prefix: '\/'\): register the kernel with `notFoundHandler: false`/ })
  t.match((error as Error).cause, { message: /^Not found handler already set/ }, 'Fastify\'s refusal is its cause')
})

t.test('with notFoundHandler: false the app\'s own answers, registered before or after the kernel', async (t) => {
  for (const order of ['kernel first', 'handler first'] as const) {
    const app = await started(async (app) => {
      if (order === 'kernel first') await app.register(kernel, { notFoundHandler: false })
      app.setNotFoundHandler(async (request, reply) => request.url.startsWith('/spa/') ? 'shell' : app.kernel.notFound(request, reply))
      if (order === 'handler first') await app.register(kernel, { notFoundHandler: false })
      app.get('/x', async () => 'x')
    })
    t.teardown(() => app.close())
    t.equal((await app.inject({ url: '/spa/a', headers })).body, 'shell', order)
    t.equal((await app.inject({ url: '/x/', headers })).statusCode, 301, `${order}: the kernel's answer through kernel.notFound()`)
  }
})

t.test('a scope with a prefix of its own keeps its handler, set before or after the kernel; Fastify\'s own refusals stay Fastify\'s', async (t) => {
  for (const order of ['kernel first', 'scope first'] as const) {
    const app = await started(async (app) => {
      if (order === 'kernel first') await app.register(kernel)
      await app.register(async (scope) => { scope.setNotFoundHandler(async () => 'the scope\'s') }, { prefix: '/docs' })
      if (order === 'scope first') await app.register(kernel)
    })
    t.teardown(() => app.close())
    t.equal((await app.inject({ url: '/docs/x', headers })).body, 'the scope\'s', order)
    t.equal((await app.inject({ url: '/x', headers })).json().detail, 'Not Found', `${order}: the kernel's elsewhere`)
  }
  await t.rejects(started(async (app) => {
    await app.register(kernel)
    await app.register(async (scope) => {
      scope.setNotFoundHandler(own)
      scope.setNotFoundHandler(own)
    }, { prefix: '/docs' })
  }), { message: 'Not found handler already set for Fastify instance with prefix: \'/docs\'' })
  const app = await started(async (app) => { await app.register(kernel) })
  t.teardown(() => app.close())
  t.throws(() => app.setNotFoundHandler(own), { code: 'FST_ERR_INSTANCE_ALREADY_LISTENING' }, 'after start: Fastify\'s own error')
})
