// Login throttling counters on a real Redis: Debian's /usr/bin/redis-server, started here on a
// free port with a folder of its own, stopped by this test by its PID. Skipped where it is absent.
import t from 'tap'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import { Redis } from 'ioredis'
import { securedApp, exampleSecurity, call, basic, passwords } from './app.js'

const REDIS_SERVER = '/usr/bin/redis-server'

async function freePort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}

/** A redis-server of this test's own; resolves once it accepts connections. */
async function startRedis (port: number, dir: string) {
  const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('Ready to accept connections')) resolve()
    })
    child.once('exit', (code) => { reject(new Error(`redis-server exited (${String(code)}): ${output}`)) })
  })
  return child
}

async function stop (child: ReturnType<typeof spawn>): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return
  const exited = once(child, 'exit')
  process.kill(child.pid, 'SIGTERM')
  await exited
}

t.test('two replicas share their counters through Redis; Redis down does not fail logins', { skip: existsSync(REDIS_SERVER) ? false : `${REDIS_SERVER} is not installed` }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kernel-redis-'))
  const port = await freePort()
  const server = await startRedis(port, dir)
  t.teardown(async () => { await stop(server); rmSync(dir, { recursive: true, force: true }) })

  const clients = [0, 1].map(() => new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: false }))
  t.teardown(() => { for (const client of clients) client.disconnect() })
  await Promise.all(clients.map((client) => once(client, 'ready')))
  const replicas = await Promise.all(clients.map(async (client) => securedApp({
    security: await exampleSecurity({ loginThrottlingStore: { redis: { client, prefix: 'test:login:', commandTimeout: 500 } } }, { loginThrottling: { maxAttempts: 3 } })
  })))
  t.teardown(async () => { for (const app of replicas) await app.close() })
  const [a, b] = replicas
  const admin = (app: typeof a, password: string) => call(app, { url: '/admin', remoteAddress: '203.0.113.7', headers: { authorization: basic('admin', password) } })

  t.equal((await admin(a, 'wrong-1')).res.statusCode, 401)
  t.equal((await admin(b, 'wrong-2')).res.statusCode, 401)
  t.equal((await admin(a, 'wrong-3')).res.statusCode, 401)
  const refused = await admin(b, passwords.admin)
  t.equal(refused.res.statusCode, 429, 'replica b counts the failures made on replica a')
  t.ok(Number(refused.res.headers['retry-after']) >= 1)

  const keys = await clients[0].keys('test:login:*')
  t.equal(keys.length, 2, 'one key per client and one per user name and client')
  t.notOk(keys.some((key) => key.includes('admin') || key.includes('203.0.113.7')), 'keys are hashes, never the user name or the address')

  await stop(server)
  await Promise.all(clients.map((client) => client.status === 'ready' ? once(client, 'close') : undefined))
  // Redis is gone: each replica falls back to counters of its own memory, logins keep working
  const down = await admin(a, passwords.admin)
  t.equal(down.res.statusCode, 200, 'no 500 while Redis is down')
  t.equal((await admin(a, 'wrong')).res.statusCode, 401)
})
