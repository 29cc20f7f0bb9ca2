import autocannon from 'autocannon'
import { createKernelApp } from '../dist/src/index.js'
const [path = '/robots.txt', method = 'GET'] = process.argv.slice(2)
const app = await createKernelApp({ kernel: { debug: false } })
app.get('/hello/:name', async (request) => ({ hello: request.params.name }))
const d = app.kernel.dispatcher; const orig = d.dispatch.bind(d); const acc = {}
d.dispatch = (event) => { const t0 = performance.now(); let r; try { r = orig(event) } finally { const s = event.stage; acc[s] ??= [0, 0]; acc[s][0] += performance.now() - t0; acc[s][1]++ } return r }
let hookTime = 0, hookN = 0
app.addHook('onRequest', (q, r, done) => { q.t0 = performance.now(); done() })
await app.listen({ port: 0, host: '127.0.0.1' })
const url = `http://127.0.0.1:${app.server.address().port}${path}`
await autocannon({ url, method, connections: 10, amount: 20000 })
for (const k in acc) acc[k] = [0, 0]
await autocannon({ url, method, connections: 10, amount: 50000 })
for (const [k, [t, n]] of Object.entries(acc)) console.log(k, n, (t / n * 1000).toFixed(2), 'µs')
await app.close()
const a = globalThis.__acc; if (a) console.log('match', (a.match / a.n * 1000).toFixed(2), 'µs; build errors', (a.build / a.n * 1000).toFixed(2), 'µs; stackTraceLimit', Error.stackTraceLimit)
