import type { FastifyInstance } from 'fastify'
import { createKernelApp } from '../../src/index.js'
import type { KernelOptions } from '../../src/index.js'
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
  await app.ready()
  return app
}
