import Fastify from 'fastify'
import { createKernelApp } from '../dist/src/index.js'
const [kind, method = 'GET', url = '/robots.txt'] = process.argv.slice(2)
const app = kind === 'bare' ? Fastify() : await createKernelApp({ kernel: { debug: false } })
app.get('/hello/:name', async (request) => ({ hello: request.params.name }))
app.post('/hello/:name', async () => ({ posted: true }))
await app.ready()
const run = async (n) => { for (let i = 0; i < n; i++) await app.inject({ method, url, headers: { accept: 'text/html', host: 'example.test' } }) }
await run(20000)
const t0 = process.hrtime.bigint(); await run(50000); const t1 = process.hrtime.bigint()
console.log(kind, method, url, (Number(t1 - t0) / 50000 / 1000).toFixed(1), 'µs/request')
