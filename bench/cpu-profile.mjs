// node bench/cpu-profile.mjs <kind> '<options JSON>' <path> [seconds] [out.cpuprofile]: a CPU profile of one
// bench server (bench/server.mjs) under load on one route, taken after a warm-up, so that start-up
// is not in it; then its self time by function and by file. BENCH_DIST as for bench/run.mjs.
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { startServer, stopServer } from './server-process.mjs'

const [kind = 'kernel', optionsJson = '{"debug":true}', path = '/hello/world', seconds = '8', out = join(tmpdir(), `bench-${process.pid}.cpuprofile`)] = process.argv.slice(2)
const { child, port } = await startServer(kind, JSON.parse(optionsJson), kind)
const load = (duration) => autocannon({ url: `http://127.0.0.1:${port}${path}`, connections: 50, duration, headers: { accept: 'text/html' } })
await load(2)
child.send({ cpuProfile: 'start' })
await once(child, 'message')
const result = await load(Number(seconds))
child.send({ cpuProfile: 'stop', path: out })
await once(child, 'message')
await stopServer(child)

const profile = JSON.parse(readFileSync(out, 'utf8'))
const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
const self = new Map()
let total = 0
let idle = 0
profile.samples.forEach((id, i) => {
  const delta = profile.timeDeltas[i] ?? 0
  total += delta
  if (nodes.get(id).callFrame.functionName === '(idle)') idle += delta
  self.set(id, (self.get(id) ?? 0) + delta)
})
const busy = total - idle
const byFunction = new Map()
const byFile = new Map()
for (const [id, time] of self) {
  const { functionName, url, lineNumber } = nodes.get(id).callFrame
  if (functionName === '(idle)') continue
  const file = url.replace(/^file:\/\//, '').replace(/.*node_modules\//, '').replace(/.*\/(dist|bench)\//, '$1/')
  const name = `${functionName || '(anonymous)'} ${file}${file === '' ? '' : `:${lineNumber + 1}`}`
  byFunction.set(name, (byFunction.get(name) ?? 0) + time)
  const group = file === '' ? functionName : file.startsWith('node:') ? file.split('/')[0] : file.startsWith('dist/') ? file : file.split('/').slice(0, file.startsWith('@') ? 2 : 1).join('/')
  byFile.set(group, (byFile.get(group) ?? 0) + time)
}
const requests = result.requests.total
console.log(`${requests} requests in ${seconds} s; busy ${(busy / 1000).toFixed(0)} ms of ${(total / 1000).toFixed(0)} ms: ${(busy / requests).toFixed(1)} µs of main thread a request; profile in ${out}`)
const show = (map, title, top) => {
  console.log(`\n${title}`)
  for (const [name, time] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${(time / requests).toFixed(2).padStart(7)} µs ${(100 * time / busy).toFixed(1).padStart(5)} %  ${name}`)
}
show(byFile, 'by file (µs a request, share of busy time)', 30)
show(byFunction, 'by function', Number(process.env.TOP ?? 40))
