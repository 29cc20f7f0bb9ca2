import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { createKernelApp, Stage } from '../../index.js'
import type { KernelContext, KernelOptions } from '../../index.js'
import { hashPassword, hashToken } from '../../src/security/index.js'

export const SECRET = 'a-test-secret-that-is-long-enough-0123456789'
export const HOST = 'example.test'

/** Cheap scrypt parameters: tests check behaviour, not cost. */
const FAST = { ln: 10, r: 8, p: 1 }

export const passwords = { admin: 'admin-pass', user: 'user-pass' }
export const tokens = { admin: 'admin-token-0123456789' }

let users: Record<string, { password: string, roles: string[] }> | undefined
export async function exampleUsers (): Promise<Record<string, { password: string, roles: string[] }>> {
  users ??= {
    admin: { password: await hashPassword(passwords.admin, FAST), roles: ['ROLE_ADMIN'] },
    user: { password: await hashPassword(passwords.user, FAST), roles: ['ROLE_USER'] }
  }
  return users
}

export function basic (username: string, password: string): string {
  return 'Basic ' + Buffer.from(`${username}:${password}`).toString('base64')
}

/**
 * An app with a stateful `main` firewall (HTTP Basic entry point, form login, logout), a
 * stateless `api` one (Bearer), `^/admin` → ROLE_ADMIN and ROLE_ADMIN ⊃ ROLE_USER.
 */
export async function securedApp (kernel: KernelOptions = {}, more?: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const app = await createKernelApp({
    kernel: {
      debug: true,
      session: { secret: SECRET },
      locale: { default: 'en', enabled: ['en', 'fr'] },
      security: {
        users: await exampleUsers(),
        roleHierarchy: { ROLE_ADMIN: ['ROLE_USER'] },
        firewalls: [
          { name: 'api', pattern: '^/api', stateless: true, bearer: { realm: 'API', tokens: { admin: hashToken(tokens.admin) } } },
          { name: 'main', pattern: '^/', httpBasic: { realm: 'Secured Area' }, formLogin: { loginPath: '/login' }, logout: { path: '/logout', target: '/' } }
        ],
        accessControl: [
          { path: '^/admin', roles: 'ROLE_ADMIN' },
          { path: '^/profile', roles: ['ROLE_USER'] },
          { path: '^/api', roles: 'IS_AUTHENTICATED' }
        ]
      },
      ...kernel
    },
    fastify: { logger: false }
  })
  app.get('/', async () => 'home')
  app.get('/admin', { config: { name: 'admin' } }, async function admin (request) { return { admin: request.security?.user?.username } })
  app.get('/profile', async (request) => ({ user: request.security?.user?.username ?? null }))
  app.get('/login', async () => 'login form')
  app.get('/api/me', async (request) => ({ user: request.security?.user?.username }))
  app.get('/:_locale/page', async (request) => ({ locale: request.locale }))
  more?.(app)
  return await ready(app)
}

const waiting = new WeakMap<FastifyInstance, Array<(context: KernelContext) => void>>()

/** Readies an app whose requests' contexts `call` can hand back (after kernel.terminate). */
export async function ready (app: FastifyInstance): Promise<FastifyInstance> {
  const queue: Array<(context: KernelContext) => void> = []
  waiting.set(app, queue)
  app.kernel.on(Stage.TERMINATE, (event) => { queue.shift()?.(event.context) }, { priority: -5000, name: 'test capture' })
  await app.ready()
  return app
}

/** One request, and the kernel context it left (trace, attributes, collected). */
export async function call (app: FastifyInstance, options: InjectOptions): Promise<{ res: LightMyRequestResponse, context: KernelContext }> {
  const context = new Promise<KernelContext>((resolve) => { waiting.get(app)!.push(resolve) })
  const res = await app.inject({ ...options, headers: { host: HOST, ...(options.headers ?? {}) } })
  return { res, context: await context }
}

/** The `name=value` part of the session cookie a response set, or null. */
export function sessionCookie (res: LightMyRequestResponse, name = 'sessionId'): string | null {
  const header = res.headers['set-cookie']
  const all = header === undefined ? [] : Array.isArray(header) ? header : [header]
  const mine = all.find((c) => c.startsWith(`${name}=`))
  return mine === undefined ? null : mine.split(';')[0]
}

/** Posts the login form. */
export function login (app: FastifyInstance, username: string, password: string, cookie?: string) {
  return call(app, {
    method: 'POST',
    url: '/login',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie === undefined ? {} : { cookie }) },
    payload: new URLSearchParams({ _username: username, _password: password }).toString()
  })
}
