import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { resolve } from 'node:path'

import { buildOnce, root } from '../../test/build-once.js'
import { startService } from './process.js'

const main = resolve(root, 'service/dist/main.js')

// the service runs from the compiled output, as `npm start` does
buildOnce()

function start (env: Record<string, string>) {
  return spawn(process.execPath, [main], { cwd: root, env: { PATH: process.env.PATH, APP_ENV: 'test', HOST: '127.0.0.1', PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
}

t.test('the service starts, answers, and shuts down gracefully on SIGTERM', async (t) => {
  const child = start({ LOG_LEVEL: 'info' })
  let output = ''
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      if (m !== null) resolve(m[1])
    })
    child.once('exit', () => reject(new Error(`exited early: ${output}`)))
  })
  const base = await listening
  const res = await fetch(`${base}/robots.txt`, { headers: { accept: 'application/json' } })
  t.equal(res.status, 404)
  t.equal(((await res.json()) as { detail: string }).detail, 'Not Found', 'production detail: the status text')
  t.equal(res.headers.get('x-robots-tag'), null, 'APP_ENV=test: debug off by default')
  child.kill('SIGTERM')
  const [code] = await once(child, 'exit')
  t.equal(code, 0)
  t.match(output, /APP_SESSION_SECRET is not set: using a random secret/, 'the generated secret is announced')
  t.match(output, /shutting down/)
  t.match(output, /"signal":"SIGTERM"/)
})

t.test('npm start in dev keeps profiles in the kernel\'s default, var/profiler under the service\'s root, whatever the working directory', async (t) => {
  // started as a process manager might, from another folder: the folder is found from the entry script
  const child = spawn(process.execPath, [main], { cwd: tmpdir(), env: { PATH: process.env.PATH, APP_ENV: 'dev', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const listening = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('Server listening at')) resolve()
    })
    child.once('exit', () => reject(new Error(`exited early: ${output}`)))
  })
  await listening
  t.match(output, `the profiler keeps profiles in ${resolve(root, 'service/var/profiler')}, shared by every process of this app`, 'the folder is said at start')
  child.kill('SIGTERM')
  const [code] = await once(child, 'exit')
  t.equal(code, 0)
})

/** Starts the service with `env` and waits for it to exit: its exit code and what it wrote to stderr. */
async function refusedStart (env: Record<string, string>): Promise<{ code: unknown, errors: string }> {
  const child = start(env)
  let errors = ''
  child.stderr.on('data', (chunk: Buffer) => { errors += chunk.toString() })
  const [code] = await once(child, 'exit')
  return { code, errors }
}

t.test('debug in prod is refused at start with the reason', async (t) => {
  const { code, errors } = await refusedStart({ APP_ENV: 'prod', APP_DEBUG: 'true' })
  t.equal(code, 1)
  t.match(errors, 'refusing to start with APP_DEBUG on in APP_ENV=prod')
})

t.test('prod without a session secret is refused with the reason', async (t) => {
  const { code, errors } = await refusedStart({ APP_ENV: 'prod' })
  t.equal(code, 1)
  t.match(errors, 'APP_SESSION_SECRET is required with APP_ENV=prod')
})

t.test('a bad variable is refused with its name', async (t) => {
  const { code, errors } = await refusedStart({ PORT: 'eighty' })
  t.equal(code, 1)
  t.match(errors, /PORT/)
})

t.test('prod without APP_TRUSTED_HOSTS warns once at start, naming the setting; with it, not at all', async (t) => {
  const secret = { APP_ENV: 'prod', APP_SESSION_SECRET: 'x'.repeat(32) }
  const bare = await startService(t, secret)
  t.equal(bare.output().match(/APP_TRUSTED_HOSTS is not set/g)?.length, 1)
  t.match(bare.output(), /"level":40,.*APP_TRUSTED_HOSTS is not set: every Host header is accepted.*Set APP_TRUSTED_HOSTS to a regular expression/)
  const vetted = await startService(t, { ...secret, APP_TRUSTED_HOSTS: '^localhost$' })
  t.notMatch(vetted.output(), 'APP_TRUSTED_HOSTS')
  const dev = await startService(t, { APP_ENV: 'dev', PROFILER_STORAGE: 'memory' })
  t.notMatch(dev.output(), 'APP_TRUSTED_HOSTS', 'a development machine is not warned')
})

t.test('SIGTERM in dev: a request sent afterwards on a kept-alive connection gets an answer (503, Connection: close), never a reset', async (t) => {
  const { connect } = await import('node:net')
  const service = await startService(t, { APP_ENV: 'dev', PROFILER_STORAGE: 'memory', LOG_LEVEL: 'info' })
  const socket = connect(Number(new URL(service.base).port), '127.0.0.1')
  let received = ''
  let failure: string | undefined
  socket.on('data', (chunk: Buffer) => { received += chunk.toString() })
  socket.on('error', (error: NodeJS.ErrnoException) => { failure = error.code })
  const closed = once(socket, 'close')
  socket.write('GET /_health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
  while (!/\r\n\r\n[^]*\}/.test(received)) await once(socket, 'data')
  t.match(received, /^HTTP\/1\.1 200 OK\r\n/, 'the connection is kept alive after a first answer')
  received = ''

  service.child.kill('SIGTERM')
  while (!/shutting down/.test(service.output())) await new Promise((resolve) => setTimeout(resolve, 10))
  socket.write('GET /_health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
  await closed
  t.equal(failure, undefined, 'no ECONNRESET')
  t.match(received, /^HTTP\/1\.1 503 Service Unavailable\r\n/, 'a status')
  t.match(received, /\r\nConnection: close\r\n/i, 'and the connection closes after it')
  const code = service.child.exitCode ?? (await once(service.child, 'exit'))[0]
  t.equal(code, 0, 'the service still exits cleanly')
})
