import Fastify from 'fastify'
import autocannon from 'autocannon'
import { createKernelApp } from '../dist/src/index.js'
const [kind, path = '/robots.txt', method = 'GET'] = process.argv.slice(2)
const app = kind === 'bare' ? Fastify() : await createKernelApp({ kernel: { debug: kind === 'debug' } })
app.get('/hello/:name', async (request) => ({ hello: request.params.name }))
await app.listen({ port: 0, host: '127.0.0.1' })
const url = `http://127.0.0.1:${app.server.address().port}${path}`
const heap = () => { global.gc(); global.gc(); return (process.memoryUsage().heapUsed / 1048576).toFixed(1) }
await autocannon({ url, method, connections: 10, amount: 5000 })
const h0 = heap()
await autocannon({ url, method, connections: 10, amount: 60000 })
const h1 = heap()
await autocannon({ url, method, connections: 10, amount: 60000 })
console.log(kind, method, path, 'heap MB after 5k / 65k / 125k requests:', h0, h1, heap())
await app.close()
