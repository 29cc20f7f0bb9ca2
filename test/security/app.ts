import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { createKernelApp, Stage } from '../../index.js'
import type { KernelContext, KernelOptions } from '../../index.js'
import { hashPassword, hashToken } from '../../src/security/index.js'
import type { FirewallOptions, SecurityOptions } from '../../src/security/index.js'
import { snapshotOf } from '../../src/profiler/request-recording.js'

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
 * The security of the test app: a stateful `main` firewall (HTTP Basic entry point, form login,
 * logout), a stateless `api` one (Bearer), `^/admin` → ROLE_ADMIN and ROLE_ADMIN ⊃ ROLE_USER.
 * `firewall` adds options to both firewalls.
 */
export async function exampleSecurity (more: Partial<SecurityOptions> = {}, firewall: Partial<FirewallOptions> = {}): Promise<SecurityOptions> {
  return {
    users: await exampleUsers(),
    roleHierarchy: { ROLE_ADMIN: ['ROLE_USER'] },
    firewalls: [
      { name: 'api', pattern: '^/api', stateless: true, bearer: { realm: 'API', tokens: { admin: hashToken(tokens.admin) } }, ...firewall },
      { name: 'main', pattern: '^/', httpBasic: { realm: 'Secured Area' }, formLogin: { loginPath: '/login' }, logout: { path: '/logout', target: '/' }, ...firewall }
    ],
    accessControl: [
      { path: '^/admin', roles: 'ROLE_ADMIN' },
      { path: '^/profile', roles: ['ROLE_USER'] },
      { path: '^/api', roles: 'IS_AUTHENTICATED' }
    ],
    ...more
  }
}

/** One stateful form-login firewall over the whole site, `^/admin` for ROLE_ADMIN. */
export async function formLoginSecurity (): Promise<SecurityOptions> {
  return {
    users: await exampleUsers(),
    firewalls: [{ name: 'main', formLogin: true, logout: true }],
    accessControl: [{ path: '^/admin', roles: 'ROLE_ADMIN' }]
  }
}

/** An app with exampleSecurity() (or `kernel.security`), sessions and locales. */
export async function securedApp (kernel: KernelOptions = {}, more?: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const app = await createKernelApp({
    kernel: {
      debug: true,
      session: { secret: SECRET },
      locale: { default: 'en', enabled: ['en', 'fr'] },
      security: await exampleSecurity(),
      ...kernel
    },
    fastify: { logger: false }
  })
  app.get('/', async () => 'home')
  app.get('/admin', { config: { name: 'admin' } }, async function admin (request) { return { admin: request.security?.user?.username } })
  app.get('/profile', async (request) => ({ user: request.security?.user?.username ?? null }))
  // the form's CSRF token, as a real login page renders it (which starts the session)
  app.get('/login', async (_request, reply) => ({ form: 'login', token: typeof reply.generateCsrf === 'function' ? reply.generateCsrf() : null }))
  app.get('/api/me', async (request) => ({ user: request.security?.user?.username }))
  app.get('/:_locale/page', async (request) => ({ locale: request.locale }))
  more?.(app)
  return await ready(app)
}

/** What a request left: its kernel context, and what the kernel's collectors make of it. */
interface Left { context: KernelContext, collected: ReturnType<FastifyInstance['kernel']['collectRecorded']> }

const waiting = new WeakMap<FastifyInstance, Array<(left: Left) => void>>()

/** Readies an app whose requests' contexts `call` can hand back (after kernel.terminate). */
export async function ready (app: FastifyInstance): Promise<FastifyInstance> {
  const queue: Array<(left: Left) => void> = []
  waiting.set(app, queue)
  app.kernel.on(Stage.TERMINATE, (event) => {
    // the collectors run as the profiler runs them, whether or not it is on
    const { request, reply, context, aborted } = event
    const live = app.kernel.collectLive({ kind: 'request', name: '', request, reply, context, aborted })
    const collected = app.kernel.collectRecorded({ kind: 'request', name: '', context, aborted, request: snapshotOf(request, reply, context) }, live)
    queue.shift()?.({ context: event.context, collected })
  }, { priority: -5000, name: 'test capture' })
  await app.ready()
  return app
}

/** One request, and what it left: the kernel context (trace, attributes, state) and the collected data. */
export async function call (app: FastifyInstance, options: InjectOptions): Promise<{ res: LightMyRequestResponse } & Left> {
  const left = new Promise<Left>((resolve) => { waiting.get(app)!.push(resolve) })
  const res = await app.inject({ ...options, headers: { host: HOST, ...(options.headers ?? {}) } })
  return { res, ...await left }
}

/** The `name=value` part of the session cookie a response set, or null. */
export function sessionCookie (res: LightMyRequestResponse, name = 'sessionId'): string | null {
  const header = res.headers['set-cookie']
  const all = header === undefined ? [] : Array.isArray(header) ? header : [header]
  const mine = all.find((c) => c.startsWith(`${name}=`))
  return mine === undefined ? null : mine.split(';')[0]
}

/** Opens the login form (GET /login): its CSRF token, and the session cookie to send with it. */
export async function loginForm (app: FastifyInstance, cookie?: string): Promise<{ token: string, cookie: string }> {
  const { res } = await call(app, { url: '/login', headers: cookie === undefined ? {} : { cookie } })
  const token = (res.json() as { token: string | null }).token
  if (token === null) throw new Error('the login form has no CSRF token (CSRF is off)')
  const session = sessionCookie(res) ?? cookie
  if (session === undefined) throw new Error('the login form started no session')
  return { token, cookie: session }
}

/** Opens the login form, then posts it with its CSRF token (`csrf: false`: posts without one). */
export async function login (app: FastifyInstance, username: string, password: string, cookie?: string, { csrf = true, remoteAddress }: { csrf?: boolean, remoteAddress?: string } = {}) {
  const form = csrf ? await loginForm(app, cookie) : { token: undefined, cookie }
  return await call(app, {
    method: 'POST',
    url: '/login',
    ...(remoteAddress === undefined ? {} : { remoteAddress }),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(form.cookie === undefined ? {} : { cookie: form.cookie }) },
    payload: new URLSearchParams({ _username: username, _password: password, ...(form.token === undefined ? {} : { _csrf_token: form.token }) }).toString()
  })
}

/** A CSRF token of the session in `cookie` (a page that renders a form, such as the login form). */
export async function csrfToken (app: FastifyInstance, cookie: string): Promise<string> {
  return (await loginForm(app, cookie)).token
}
