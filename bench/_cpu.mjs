import { fork } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import autocannon from 'autocannon'
const cpu = (pid) => { const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" "); return [Number(f[11]) * 10, Number(f[12]) * 10] }
for (const mode of process.argv.slice(2)) {
  const [script, arg] = mode.startsWith('kernel') ? ['/work/main/bench/server.mjs', ['kernel', mode === 'kerneldebug' ? '{"debug":true}' : '{"debug":false}']] : ['/work/main/bench/_floorsrv.mjs', [mode]]
  const child = fork(script, arg, { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
  const [chunk] = await once(child.stdout, 'data')
  const port = Number(String(chunk).trim())
  const opts = { url: `http://127.0.0.1:${port}${process.env.P ?? '/robots.txt'}`, connections: 20, headers: { accept: 'text/html' }, method: process.env.M ?? 'GET' }
  await autocannon({ ...opts, amount: 20000 })
  const n = 100000; const c0 = cpu(child.pid)
  const r = await autocannon({ ...opts, amount: n })
  const c1 = cpu(child.pid)
  console.log(mode.padEnd(12), `user ${((c1[0] - c0[0]) * 1000 / n).toFixed(1)} sys ${((c1[1] - c0[1]) * 1000 / n).toFixed(1)} µs/request`, Object.keys(r.statusCodeStats).join('/'))
  child.kill(); await once(child, 'exit')
}
