import { randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyReply } from 'fastify'
import escapeHtml from 'escape-html'
import { hashPassword, hashToken } from 'fastify-kernel/security'
import type { KernelOptions } from 'fastify-kernel'
// reply.generateCsrf() of the login form: the session option's types
import type {} from 'fastify-kernel/session'
import type { ServiceEnv } from './env.js'

const HOME_LINKS: Array<[string, string]> = [
  ['/hello/world', 'a matched route with a parameter'],
  ['/items/42', 'a requirement: the id must be digits'],
  ['/items/abc', 'the requirement fails: 404'],
  ['/blog', 'wrong trailing slash: 301 to /blog/'],
  ['/fr/contact', 'a route with a _locale parameter: request.locale is fr'],
  ['/de/contact', 'a locale that is not enabled: 404'],
  ['/admin', 'protected (ROLE_ADMIN): 401, log in as admin/admin'],
  ['/login', 'the login form (admin/admin or user/user), with its CSRF token; log out there or on /admin'],
  ['/profile', 'a route access check (isGranted: ROLE_USER)'],
  ['/robots.txt', 'no route: the exact Symfony 404'],
  ['/form', 'GET and POST only (try PUT: 405 with Allow)'],
  ['/boom', 'a controller that throws: 500'],
  ['/demo', 'the profiler at work: an HTTP call, Redis and SQL (when configured), a template, a dump, the stopwatch']
]

/** A small application so a new user sees the kernel at work at once. */
export function registerExampleRoutes (app: FastifyInstance): void {
  app.get('/', { config: { name: 'home' } }, async function home (_request, reply) {
    const items = HOME_LINKS.map(([href, text]) => `<li><a href="${escapeHtml(href)}">${escapeHtml(href)}</a> — ${escapeHtml(text)}</li>`).join('\n')
    return reply.type('text/html; charset=utf-8').send(`<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8"><title>fastify-kernel</title>
<style>body{font:16px/1.6 system-ui,sans-serif;margin:40px;max-width:720px}code{background:#f3f3f3;padding:1px 4px}</style></head>
<body><h1>fastify-kernel is running</h1>
<p>Debug mode: <code>${app.kernel.debug ? 'on' : 'off'}</code>. Try these:</p>
<ul>
${items}
</ul></body></html>`)
  })

  app.get('/hello/:name', { config: { name: 'hello' } }, async function hello (request) {
    const { name } = request.params as { name: string }
    return { greeting: `Hello ${name}!` }
  })

  app.get('/items/:id(^\\d+$)', { config: { name: 'item_show' } }, async function showItem (request) {
    const { id } = request.params as { id: string }
    return { id: Number(id) }
  })

  app.get('/blog/', { config: { name: 'blog' } }, async function blog () {
    return { posts: [] }
  })

  app.get('/:_locale(^(en|fr)$)/contact', { config: { name: 'contact' } }, async function contact (request) {
    const locale = request.locale
    return { locale, message: locale === 'fr' ? 'Contactez-nous' : 'Contact us' }
  })

  registerSecurityExamples(app)

  app.route({
    method: ['GET', 'POST'],
    url: '/form',
    config: { name: 'form' },
    handler: async function form (request) {
      return { method: request.method }
    }
  })

  app.get('/boom', { config: { name: 'boom' } }, async function boom () {
    throw new Error('Something went wrong in the controller', { cause: new Error('The database is not reachable') })
  })
}

/** Demo users of dev and test (never prod): `curl -u admin:admin http://127.0.0.1:8000/admin`. */
export const DEMO_USERS = [
  { username: 'admin', password: 'admin', roles: ['ROLE_ADMIN'] },
  { username: 'user', password: 'user', roles: ['ROLE_USER'] }
] as const
/** Demo API token of `admin` in dev and test: `curl -H 'Authorization: Bearer admin-api-token' .../api/me`. */
export const DEMO_API_TOKEN = 'admin-api-token'

/**
 * The example's session, locale and security options from the environment. Returns notes to
 * log once the app exists (a generated secret, demo users).
 */
export async function exampleRequestServices (env: ServiceEnv): Promise<{ options: Required<Pick<KernelOptions, 'session' | 'locale' | 'security'>>, notes: Array<{ level: 'info' | 'warn', message: string }> }> {
  const notes: Array<{ level: 'info' | 'warn', message: string }> = []
  const demo = env.APP_ENV !== 'prod'
  let secret = env.APP_SESSION_SECRET
  if (secret === null) {
    // only dev and test get here (prod refuses to start): sessions die with the process
    secret = randomBytes(32).toString('base64url')
    notes.push({ level: 'warn', message: 'fastify-kernel: APP_SESSION_SECRET is not set: using a random secret for this process (sessions end at restart). Set it in .env; it is required with APP_ENV=prod.' })
  }
  let users = env.APP_USERS
  if (users === null && demo) {
    users = await Promise.all(DEMO_USERS.map(async (u) => ({ username: u.username, password: await hashPassword(u.password), roles: [...u.roles] })))
    notes.push({ level: 'info', message: 'fastify-kernel: demo users admin/admin (ROLE_ADMIN) and user/user (ROLE_USER); set APP_USERS to replace them' })
  } else if (users === null) {
    users = []
    notes.push({ level: 'warn', message: 'fastify-kernel: APP_USERS is not set: no one can log in' })
  }
  const tokens = env.APP_API_TOKENS ?? (demo ? { admin: hashToken(DEMO_API_TOKEN) } : {})
  const loginThrottling = env.LOGIN_MAX_ATTEMPTS === 0 ? false : { maxAttempts: env.LOGIN_MAX_ATTEMPTS, interval: env.LOGIN_INTERVAL }
  return {
    notes,
    options: {
      session: { secret },
      locale: { enabled: env.APP_LOCALES, default: env.APP_DEFAULT_LOCALE, fromAcceptLanguage: true, contentLanguage: true },
      security: {
        users: Object.fromEntries(users.map((u) => [u.username, { password: u.password, roles: u.roles }])),
        roleHierarchy: { ROLE_ADMIN: ['ROLE_USER'] },
        firewalls: [
          { name: 'api', pattern: '^/api/', stateless: true, bearer: { realm: 'fastify-kernel API', tokens }, loginThrottling },
          // form login and logout take a CSRF token (on by default): the pages below render it
          { name: 'main', pattern: '^/', httpBasic: { realm: 'fastify-kernel' }, formLogin: { loginPath: '/login', defaultTargetPath: '/admin' }, logout: { path: '/logout', target: '/' }, entryPoint: 'httpBasic', loginThrottling }
        ],
        accessControl: [
          { path: '^/admin', roles: 'ROLE_ADMIN' },
          { path: '^/api/', roles: 'IS_AUTHENTICATED' }
        ]
      }
    }
  }
}

/** the page language when the request has no locale */
const DEFAULT_LANG = 'en'

const PAGE_STYLE = '<style>body{font:16px/1.6 system-ui,sans-serif;margin:40px;max-width:720px}label{display:block;margin:8px 0}input{font:inherit}.error{color:#b00}.inline{display:inline}</style>'

function page (title: string, body: string, lang: string): string {
  return `<!DOCTYPE html>\n<html lang="${escapeHtml(lang)}"><head><meta charset="UTF-8"><title>${escapeHtml(title)}</title>${PAGE_STYLE}</head>\n<body>${body}</body></html>`
}

/** The hidden field the kernel's form login and logout read their CSRF token from (`_csrf_token`). */
function csrfField (reply: FastifyReply): string {
  return `<input type="hidden" name="_csrf_token" value="${escapeHtml(reply.generateCsrf())}">`
}

/** Logout is a POST with the CSRF token: a link (GET) could be triggered by any other site. */
function logoutButton (reply: FastifyReply): string {
  return `<form method="post" action="/logout" class="inline">${csrfField(reply)}<button type="submit">Log out</button></form>`
}

/** The protected admin page, the login form, a route access check and an API route. */
function registerSecurityExamples (app: FastifyInstance): void {
  app.get('/admin', { config: { name: 'admin' } }, async function admin (request, reply) {
    const user = request.security?.user
    // HTTP Basic keeps nothing in the session: only a form login has a session to log out of
    const logout = request.security?.authenticator === 'session' ? logoutButton(reply) : ''
    return reply.type('text/html; charset=utf-8').send(page('Admin', `<h1>Admin area</h1>
<p>Hello ${escapeHtml(user?.username ?? '')} (${escapeHtml(request.security?.roles.join(', ') ?? '')}), authenticated by ${escapeHtml(request.security?.authenticator ?? '')}.</p>
<p>${logout} <a href="/">Home</a></p>`, request.locale ?? DEFAULT_LANG))
  })

  app.get('/login', { config: { name: 'login' } }, async function loginForm (request, reply) {
    const failed = (request.query as { error?: string }).error !== undefined
    const user = request.security?.user
    return reply.type('text/html; charset=utf-8').send(page('Log in', `<h1>Log in</h1>
${user === null || user === undefined ? '' : `<p>You are logged in as ${escapeHtml(user.username)}. ${request.security?.authenticator === 'session' ? logoutButton(reply) : ''}</p>`}
${failed ? '<p class="error">Invalid credentials.</p>' : ''}
<form method="post" action="/login">
${csrfField(reply)}
<label>Username <input name="_username" autocomplete="username" required></label>
<label>Password <input name="_password" type="password" autocomplete="current-password" required></label>
<button type="submit">Log in</button>
</form>
<p>Demo users (dev): admin/admin, user/user. <a href="/">Home</a></p>`, request.locale ?? DEFAULT_LANG))
  })

  app.get('/profile', { config: { name: 'profile', isGranted: 'ROLE_USER' } }, async function profile (request) {
    return { user: request.security?.user?.username ?? null, roles: request.security?.roles ?? [], locale: request.locale }
  })

  app.get('/api/me', { config: { name: 'api_me' } }, async function apiMe (request) {
    return { user: request.security?.user?.username ?? null, roles: request.security?.roles ?? [] }
  })
}
