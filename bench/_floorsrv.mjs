import Fastify from 'fastify'
import view from '@fastify/view'
import Handlebars from 'handlebars'
import { kernelServerOptions } from '../dist/src/index.js'
const mode = process.argv[2]
const has = (x) => mode.includes(x)
const app = Fastify(has('O') ? kernelServerOptions() : {})
if (has('V')) await app.register(view, { engine: { handlebars: Handlebars.create() }, propertyName: 'kv', production: true })
const page = '<!DOCTYPE html>' + 'x'.repeat(800)
const answer = (reply) => {
  if (has('H')) { reply.removeHeader('content-length'); reply.code(404).headers({ Vary: 'Accept' }).header('content-type', 'text/html; charset=utf-8'); reply.send(page) }
  else reply.code(404).type('text/html; charset=utf-8').send(page)
}
app.addHook('onRequest', (req, reply, done) => { if (req.is404) { answer(reply); return } done() })
if (has('A')) { app.addHook('preHandler', (q,r,d)=>d()); app.addHook('onSend', (q,r,p,d)=>d(null,p)); app.addHook('onResponse', (q,r,d)=>d()); app.addHook('onRequestAbort', (q,d)=>d()) }
if (has('N')) app.setNotFoundHandler({ config: { x: true } }, (req, reply) => answer(reply))
app.get('/hello/:name', async (request) => ({ hello: request.params.name }))
await app.listen({ port: 0, host: '127.0.0.1' })
process.stdout.write(`${app.server.address().port}\n`)
