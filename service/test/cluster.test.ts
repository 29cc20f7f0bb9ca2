import t from 'tap'
import type { Test } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildOnce } from '../../test/build-once.js'
import { main, spawnService, stopProcess } from './process.js'

buildOnce()

const SECRET = 'a-shared-session-secret-of-40-characters'

/** A node:cluster primary forking two workers of the service (sharing one port). */
function clusterScript (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'kernel-cluster-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'primary.mjs')
  writeFileSync(file, `import cluster from 'node:cluster'
cluster.setupPrimary({ exec: ${JSON.stringify(main)} })
for (let i = 0; i < 2; i++) cluster.fork()
cluster.on('exit', (worker, code) => { console.log('worker exited with ' + code) })
process.on('SIGTERM', () => {
  for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGTERM')
  cluster.on('exit', () => { if (Object.keys(cluster.workers).length === 0) process.exit(0) })
  if (Object.keys(cluster.workers).length === 0) process.exit(0)
})
`)
  return file
}

t.test('node:cluster with the default file storage: both workers serve, each one\'s profiles open on the other', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kernel-profiles-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const { child, output, waitFor } = spawnService({ APP_DEBUG: 'true', APP_SESSION_SECRET: SECRET, PROFILER_DIR: dir }, clusterScript(t))
  t.teardown(() => stopProcess(child))
  t.ok(await waitFor(/listening[\s\S]*listening/), 'both workers serve')
  t.notMatch(output(), /worker exited/, 'neither is refused')
  const base = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output())![1]
  // the primary hands connections to the workers in turn: requests on fresh connections reach both
  const answers = await Promise.all(Array.from({ length: 8 }, async (_, i) => {
    const res = await fetch(`${base}/hello/cluster-${i}`, { headers: { connection: 'close' } })
    await res.arrayBuffer()
    return { token: res.headers.get('x-debug-token')! }
  }))
  const slots = new Set<string>()
  for (const { token } of answers) {
    // any worker may answer the page: each one reads the others' profiles from the folder
    for (let ask = 0; ask < 4; ask++) {
      const page = await fetch(`${base}/_profiler/${token}`, { headers: { connection: 'close' } })
      const body = await page.text()
      t.match(body, '/hello/cluster-', `${token}, asked of a worker (${ask + 1})`)
      t.notMatch(body, 'not found')
    }
    slots.add(token.slice(0, 2))
  }
  t.equal(slots.size, 2, 'the tokens of two writers (two slots): both workers answered and stored')
})

t.test('node:cluster with memory storage: each worker warns that profiles and sessions are per process', async (t) => {
  const { child, output, waitFor } = spawnService({ APP_DEBUG: 'true', APP_SESSION_SECRET: SECRET, PROFILER_STORAGE: 'memory' }, clusterScript(t))
  t.teardown(() => stopProcess(child))
  t.ok(await waitFor(/listening[\s\S]*listening/), 'both workers serve')
  t.equal(output().match(/keeps profiles in this process's memory, and this is a node:cluster worker/g)?.length, 2, 'the profiler warns in each worker')
  t.equal(output().match(/sessions are kept in this process's memory, and this is a node:cluster worker/g)?.length, 2, 'so does the session store')
})
