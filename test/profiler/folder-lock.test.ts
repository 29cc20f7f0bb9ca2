import t from 'tap'
import type { Test } from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { FileProfileStorage } from '../../src/profiler/storage/file.js'
import { fakeProfileMaker } from './helpers.js'

const fakeProfile = fakeProfileMaker(0x600000)
const limits = { maxProfiles: 50, maxAgeMs: 60_000 }
const log = { warn: () => {} }
const holder = resolve(import.meta.dirname, 'fixtures/hold-folder.mjs')

function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'profiler-lock-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Another process holding the folder (the compiled storage), once it says it is ready. */
async function holdingProcess (t: Test, dir: string) {
  const child = spawn(process.execPath, [holder, dir], { stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  while (!output.includes('ready')) {
    if (child.exitCode !== null) throw new Error(`the holder exited (${child.exitCode})`)
    await once(child.stdout, 'data')
  }
  return child
}

t.test('a folder held by a live process is refused, naming it; once that process is killed (SIGKILL) it is taken over at once', async (t) => {
  const dir = tempDir(t)
  const child = await holdingProcess(t, dir)
  await t.rejects(FileProfileStorage.open(dir, limits, log), {
    code: 'KERNEL_PROFILER_FOLDER_IN_USE',
    message: new RegExp(`already used by process ${child.pid!} on host`)
  })
  const exited = once(child, 'exit')
  child.kill('SIGKILL')
  await exited
  // its lock is still fresh (it went stale after 10 s): the dead holder is seen by its id;
  // of three storages opening the folder at once, one takes it over, the others are refused
  const opened = await Promise.allSettled([1, 2, 3].map(() => FileProfileStorage.open(dir, limits, log)))
  const stores = opened.filter((result) => result.status === 'fulfilled').map((result) => result.value)
  t.equal(stores.length, 1, 'one writer')
  const store = stores[0]
  t.teardown(() => store.close())
  t.match(opened.filter((result) => result.status === 'rejected').map((result) => (result.reason as { code: string }).code), ['KERNEL_PROFILER_FOLDER_IN_USE', 'KERNEL_PROFILER_FOLDER_IN_USE'])
  const profile = fakeProfile()
  await store.save(profile)
  t.same(await store.load(profile.token), profile, 'the storage works')
  await t.rejects(FileProfileStorage.open(dir, limits, log), { code: 'KERNEL_PROFILER_FOLDER_IN_USE', message: new RegExp(`process ${process.pid} `) }, 'and holds the folder in turn')
})

t.test('a lock naming this process id, not held by it, is a predecessor\'s (a restarted container); another host\'s waits', async (t) => {
  const dir = tempDir(t)
  mkdirSync(join(dir, '.lock'))
  writeFileSync(join(dir, '.owner.json'), JSON.stringify({ host: hostname(), pid: process.pid, since: '2020-01-01T00:00:00.000Z' }))
  const store = await FileProfileStorage.open(dir, limits, log)
  await store.close()

  const shared = tempDir(t)
  mkdirSync(join(shared, '.lock'))
  writeFileSync(join(shared, '.owner.json'), JSON.stringify({ host: 'another-host', pid: 2147483646, since: '2020-01-01T00:00:00.000Z' }))
  await t.rejects(FileProfileStorage.open(shared, limits, log), { message: /process 2147483646 on host "another-host"/ }, 'process ids of another host say nothing')
})
