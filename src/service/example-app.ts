import type { FastifyInstance } from 'fastify'
import { escapeHtml } from '../http/encoding.js'

const HOME_LINKS: Array<[string, string]> = [
  ['/hello/world', 'a matched route with a parameter'],
  ['/items/42', 'a requirement: the id must be digits'],
  ['/items/abc', 'the requirement fails: 404'],
  ['/blog', 'wrong trailing slash: 301 to /blog/'],
  ['/fr/contact', 'a route with a _locale parameter'],
  ['/robots.txt', 'no route: the exact Symfony 404'],
  ['/form', 'GET and POST only (try PUT: 405 with Allow)'],
  ['/boom', 'a controller that throws: 500']
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
    const { _locale: locale } = request.params as { _locale: string }
    return { locale, message: locale === 'fr' ? 'Contactez-nous' : 'Contact us' }
  })

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
