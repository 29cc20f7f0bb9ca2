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

t.test('node:cluster with file storage on one folder: the second worker is refused by name, the first serves and keeps its profiles', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kernel-profiles-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const { child, output, waitFor } = spawnService({ APP_DEBUG: 'true', APP_SESSION_SECRET: SECRET, PROFILER_STORAGE: 'file', PROFILER_DIR: dir }, clusterScript(t))
  t.teardown(() => stopProcess(child))
  t.ok(await waitFor(/worker exited with 1/), 'one worker exits')
  t.match(output(), /the profiler cannot use its folder ".*": the folder is already used by process \d+ on host/)
  t.match(output(), /give each process its own folder, or share profiles between processes with the Redis storage/)
  const listening = await waitFor(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/)
  t.ok(listening, 'the other serves')
  const base = listening![1]
  const res = await fetch(`${base}/hello/cluster`)
  t.equal(res.status, 200)
  const token = res.headers.get('x-debug-token')!
  // the toolbar answers once the profile is stored (it is saved after the response)
  t.equal((await fetch(`${base}/_wdt/${token}`)).status, 200)
  t.match(await (await fetch(`${base}/_profiler/${token}`)).text(), '/hello/cluster', 'its profile is stored and shown')
})

t.test('node:cluster with memory storage: each worker warns that profiles and sessions are per process', async (t) => {
  const { child, output, waitFor } = spawnService({ APP_DEBUG: 'true', APP_SESSION_SECRET: SECRET, PROFILER_STORAGE: 'memory' }, clusterScript(t))
  t.teardown(() => stopProcess(child))
  t.ok(await waitFor(/listening[\s\S]*listening/), 'both workers serve')
  t.equal(output().match(/keeps profiles in this process's memory, and this is a node:cluster worker/g)?.length, 2, 'the profiler warns in each worker')
  t.equal(output().match(/sessions are kept in this process's memory, and this is a node:cluster worker/g)?.length, 2, 'so does the session store')
})
