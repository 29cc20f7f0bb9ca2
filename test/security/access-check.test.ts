import t from 'tap'
import type { FastifyRequest } from 'fastify'
import { securedApp, call, basic, passwords, ready } from './app.js'
import { createKernelApp } from '../../index.js'
import type { SecurityCollected, SecurityUser } from '../../src/security/index.js'

t.test('route isGranted: a role, a list, a function; a denied controller never runs', async (t) => {
  const ran: string[] = []
  let seenParams: unknown
  const app = await securedApp({}, (app) => {
    app.get('/reports', { config: { name: 'reports', isGranted: 'ROLE_ADMIN' } }, async function reports () { ran.push('reports'); return 'reports' })
    app.get('/either', { config: { isGranted: ['ROLE_EDITOR', 'ROLE_USER'] } }, async () => { ran.push('either'); return 'either' })
    app.get('/own/:name', {
      config: {
        isGranted: function ownPage (user: SecurityUser | null, request: FastifyRequest) {
          seenParams = request.params
          return user !== null && user.username === (request.params as { name: string }).name
        }
      }
    }, async () => { ran.push('own'); return 'own' })
  })
  t.teardown(() => app.close())

  const anon = await call(app, { url: '/reports' })
  t.equal(anon.res.statusCode, 401, 'anonymous: the entry point')
  t.equal(anon.res.headers['www-authenticate'], 'Basic realm="Secured Area"')
  t.equal(anon.res.body, '')
  const stages = anon.context.trace.filter((e) => e.listener === undefined).map((e) => e.stage)
  t.same(stages.slice(0, 4), ['kernel.request', 'kernel.controller', 'kernel.controller_arguments', 'kernel.exception'], 'checked in kernel.controller_arguments')
  t.equal(anon.context.trace.find((e) => e.listener === 'access check')?.outcome, 'threw')

  const user = await call(app, { url: '/reports', headers: { authorization: basic('user', passwords.user) } })
  t.equal(user.res.statusCode, 403)
  t.match(user.res.body, 'Access Denied.')
  t.equal((user.collected.security as SecurityCollected).decision, 'denied')
  t.equal((user.collected.security as SecurityCollected).reason, 'route "reports" requires ROLE_ADMIN')
  t.same(ran, [], 'the controller did not run')

  const admin = await call(app, { url: '/reports', headers: { authorization: basic('admin', passwords.admin) } })
  t.equal(admin.res.statusCode, 200)
  t.equal((admin.collected.security as SecurityCollected).decision, 'granted')

  t.equal((await call(app, { url: '/either', headers: { authorization: basic('user', passwords.user) } })).res.statusCode, 200, 'any role of the list')
  t.equal((await call(app, { url: '/either', headers: { authorization: basic('admin', passwords.admin) } })).res.statusCode, 200, 'through the hierarchy')

  t.equal((await call(app, { url: '/own/user', headers: { authorization: basic('user', passwords.user) } })).res.statusCode, 200)
  t.same(seenParams, { name: 'user' }, 'the function sees the resolved arguments')
  t.equal((await call(app, { url: '/own/admin', headers: { authorization: basic('user', passwords.user) } })).res.statusCode, 403)
  t.equal((await call(app, { url: '/own/user' })).res.statusCode, 401)
  t.same(ran, ['reports', 'either', 'either', 'own'])
})

t.test('isGranted without the security option: everyone is anonymous, the route answers 403', async (t) => {
  let ran = false
  const app = await createKernelApp({ kernel: { debug: false }, fastify: { logger: false } })
  app.get('/secret', { config: { isGranted: 'ROLE_ADMIN' } }, async () => { ran = true; return 'secret' })
  app.get('/open', async () => 'open')
  await ready(app)
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/secret', headers: { accept: 'application/json' } })
  t.equal(res.statusCode, 403)
  t.equal(res.json().detail, 'Forbidden')
  t.equal(ran, false)
  t.equal((await app.inject({ url: '/open' })).statusCode, 200)
})

t.test('a bad isGranted value fails when the route is added', async (t) => {
  const app = await createKernelApp({ kernel: {}, fastify: { logger: false } })
  t.teardown(() => app.close())
  t.throws(() => app.get('/x', { config: { isGranted: 42 as never } }, async () => 'x'), { code: 'KERNEL_INVALID_OPTIONS', message: /config\.isGranted must be/ })
  t.throws(() => app.get('/y', { config: { isGranted: [] as never } }, async () => 'y'), { message: /GET \/y/ })
})

t.test('a firewall with security: false, and requests outside every firewall, are anonymous and unchecked', async (t) => {
  const app = await createKernelApp({
    kernel: {
      security: {
        users: {},
        firewalls: [{ name: 'dev', pattern: '^/_dev', security: false }, { name: 'main', pattern: '^/app', httpBasic: true }],
        accessControl: [{ path: '^/', roles: 'ROLE_USER' }]
      }
    },
    fastify: { logger: false }
  })
  app.get('/_dev/x', async (request) => ({ security: request.security?.firewall ?? null }))
  app.get('/app/x', async () => 'app')
  await ready(app)
  t.teardown(() => app.close())
  const dev = await call(app, { url: '/_dev/x' })
  t.equal(dev.res.statusCode, 200)
  t.equal((dev.collected.security as SecurityCollected).firewall, null)
  const main = await call(app, { url: '/app/x' })
  t.equal(main.res.statusCode, 401)
  t.equal(main.res.headers['www-authenticate'], 'Basic realm="Secured Area"', 'the default realm')
})

t.test('request.security in controllers: isGranted() and denyAccessUnlessGranted()', async (t) => {
  const app = await securedApp({}, (app) => {
    app.get('/reports/:id', async (request) => {
      request.security!.denyAccessUnlessGranted('ROLE_ADMIN')
      return { admin: request.security!.isGranted('ROLE_ADMIN'), user: request.security!.isGranted(['ROLE_USER']) }
    })
  })
  t.teardown(() => app.close())
  const anon = await call(app, { url: '/reports/1' })
  t.equal(anon.res.statusCode, 401)
  t.equal(anon.res.headers['www-authenticate'], 'Basic realm="Secured Area"')
  const user = await call(app, { url: '/reports/1', headers: { authorization: basic('user', passwords.user) } })
  t.equal(user.res.statusCode, 403)
  t.equal((user.collected.security as SecurityCollected).reason, 'the controller requires ROLE_ADMIN')
  const admin = await call(app, { url: '/reports/1', headers: { authorization: basic('admin', passwords.admin) } })
  t.same(admin.res.json(), { admin: true, user: true })
})
