import { fork } from 'node:child_process'
import { once } from 'node:events'
import autocannon from 'autocannon'
const configs = JSON.parse(process.argv[2])
const path = process.argv[3] ?? '/hello/world'
const N = Number(process.argv[4] ?? 20000)
for (const [kind, options] of configs) {
  const child = fork('/work/wt-profiler/bench/server.mjs', [kind, JSON.stringify(options)], { execArgv: process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : [], stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
  const [chunk] = await once(child.stdout, 'data')
  const port = Number(String(chunk).trim())
  const mem = async () => { child.send('memory'); const [m] = await once(child, 'message'); return m }
  await autocannon({ url: `http://127.0.0.1:${port}${path}`, connections: 20, amount: 5000 })
  await new Promise(r => setTimeout(r, 300))
  const a = await mem()
  const r = await autocannon({ url: `http://127.0.0.1:${port}${path}`, connections: 20, amount: N })
  await new Promise(r => setTimeout(r, 500)) // deferred saves
  const b = await mem()
  console.log(`${kind} ${JSON.stringify(options).slice(0, 70)}: ${((b.cpu - a.cpu) / N).toFixed(1)} µs CPU/request, ${Math.round(r.requests.average)} req/s, dropped ${b.dropped}, profiles ${b.profiles}`)
  child.kill('SIGINT'); await once(child, 'exit')
}
