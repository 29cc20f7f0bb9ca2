/**
 * Passwords in Redis commands, against a real redis-server with ioredis and node-redis: CONFIG
 * SET requirepass, ACL SETUSER >password, the commands carried by ACL DRYRUN and COMMAND
 * GETKEYS, and those the clients mask themselves (AUTH, MIGRATE … AUTH, SENTINEL). No password
 * reaches the Cache panel, the timeline, the toolbar, a stored profile (memory, file, Redis) or
 * the console.
 */
import t from 'tap'
import type { Test } from 'tap'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import type { FastifyInstance } from 'fastify'
import { createKernelApp } from '../../../index.js'
import type { KernelOptions } from '../../../index.js'
import { page, profiled } from '../helpers.js'
import { profilerOf } from '../../helpers.js'
import { TestRedis, freePort } from '../../redis/server.js'
import { fixture, runCli } from '../../cli/run-cli.js'

const redis = await TestRedis.start(t)
const admin = redis.client(t)
/** every password below contains it: found anywhere, a password leaked */
const MARK = 'zz-pw-'
const HASH = 'c'.repeat(64)
const closedPort = await freePort()

/** The commands of the table, sent by a client as an app would; each may fail, as some must. */
async function sendEverything (send: (...args: string[]) => Promise<unknown>, who: string): Promise<void> {
  const attempt = async (...args: string[]): Promise<void> => { await send(...args).catch(() => undefined) }
  await attempt('CONFIG', 'SET', 'requirepass', `${MARK}${who}-requirepass`)
  await attempt('CONFIG', 'SET', 'requirepass', '')
  await attempt('CONFIG', 'SET', 'masterauth', `${MARK}${who}-masterauth`, 'masteruser', `${MARK}${who}-masteruser`)
  await attempt('CONFIG', 'SET', 'tls-key-file-pass', `${MARK}${who}-tls`)
  await attempt('ACL', 'SETUSER', `probe-${who}`, 'on', `>${MARK}${who}-add`, `<${MARK}${who}-remove`, `#${HASH}`, '~probe:*', '+get')
  await attempt('ACL', 'SETUSER', `probe-${who}`, `on >${MARK}${who}-glued`)
  await attempt('ACL', 'DRYRUN', `probe-${who}`, 'CONFIG', 'SET', 'requirepass', `${MARK}${who}-dryrun`)
  await attempt('COMMAND', 'GETKEYS', 'MIGRATE', '127.0.0.1', String(closedPort), '', '0', '10', 'AUTH', `${MARK}${who}-getkeys`, 'KEYS', 'probe:a')
  await attempt('AUTH', `probe-${who}`, `${MARK}${who}-auth`)
  await attempt('MIGRATE', '127.0.0.1', String(closedPort), '', '0', '10', 'AUTH2', `probe-${who}`, `${MARK}${who}-migrate`, 'KEYS', 'probe:none')
  await attempt('SENTINEL', 'SET', 'mymaster', 'auth-pass', `${MARK}${who}-sentinel`)
  await attempt('ACL', 'DELUSER', `probe-${who}`)
}

async function clients (t: Test): Promise<{ io: Redis, node: { sendCommand: (args: string[]) => Promise<unknown> } }> {
  const io = new Redis(redis.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 1 })
  await io.connect()
  t.teardown(() => { io.disconnect() })
  const node = createClient({ url: redis.url })
  node.on('error', () => undefined)
  await node.connect()
  t.teardown(async () => { await node.quit() })
  return { io, node }
}

async function appWith (t: Test, profiler: KernelOptions['profiler']): Promise<FastifyInstance> {
  const { io, node } = await clients(t)
  const app = await createKernelApp({ kernel: { debug: true, profiler } })
  app.get('/secrets', async () => {
    await sendEverything((command, ...args) => io.call(command, ...args), 'io')
    await sendEverything((...args) => node.sendCommand(args), 'nr')
    return 'ok'
  })
  t.teardown(() => app.close())
  return app
}

/** Every surface of one profile: the profile itself, the Cache panel, the timeline, the toolbar. */
async function checkSurfaces (t: Test, app: FastifyInstance): Promise<string> {
  const { profile, token, res } = await profiled(app, { url: '/secrets' })
  t.equal(res.statusCode, 200)
  const commands = profile.collected.cache!.commands.filter((command) => command.kernel !== true)
  for (const client of ['ioredis', 'node-redis']) {
    const shown = commands.filter((command) => command.client === client).map((command) => `${command.command} ${command.args.join(' ')}`)
    t.same(shown, [
      'CONFIG SET requirepass ******',
      'CONFIG SET requirepass ******',
      'CONFIG SET masterauth ****** masteruser ******',
      'CONFIG SET tls-key-file-pass ******',
      `ACL SETUSER probe-${client === 'ioredis' ? 'io' : 'nr'} on >****** <****** #****** ~probe:* +get`,
      `ACL SETUSER probe-${client === 'ioredis' ? 'io' : 'nr'} on >******`,
      `ACL DRYRUN probe-${client === 'ioredis' ? 'io' : 'nr'} CONFIG SET requirepass ******`,
      `COMMAND GETKEYS MIGRATE 127.0.0.1 ${closedPort}  0 10 AUTH ****** KEYS probe:a`,
      // the clients mask these themselves
      'AUTH ? ?',
      'MIGRATE ? ? ? ? ? ? ? ? ? ?',
      'SENTINEL ? ? ? ?',
      `ACL DELUSER probe-${client === 'ioredis' ? 'io' : 'nr'}`
    ], `${client}: every password masked, everything else kept`)
  }
  const sentinel = commands.find((command) => command.command === 'SENTINEL')!
  t.equal(sentinel.error, 'ERR unknown command \'SENTINEL\', with args beginning with: \'?\' \'?\' \'?\' \'?\' ', 'the arguments redis-server quotes in its error, as the client published them')
  const glued = commands.find((command) => command.command === 'ACL' && command.args.length === 3)!
  t.equal(glued.error, 'ERR Error in ACL SETUSER modifier \'on >******\': Syntax error', 'a password the error quotes')
  t.notMatch(JSON.stringify(profile), MARK, 'no password anywhere in the profile')
  const panel = await page(app, `/_profiler/${token}?panel=cache`)
  t.match(panel.body, /<td class="mono">SET requirepass \*\*\*\*\*\*<\/td>/, 'the Cache panel')
  t.notMatch(panel.body, MARK)
  const timeline = await page(app, `/_profiler/${token}?panel=time`)
  t.match(timeline.body, 'CONFIG', 'the timeline has the commands')
  t.notMatch(timeline.body, MARK)
  t.notMatch((await page(app, `/_wdt/${token}`)).body, MARK, 'the toolbar')
  return token
}

function filesUnder (dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })
}

t.test('memory storage: the panels and the profile show no password', async (t) => {
  const app = await appWith(t, { storage: 'memory' })
  await checkSurfaces(t, app)
})

t.test('file storage: no password in its files, nor in what the console prints', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'kernel-cache-secrets-'))
  t.teardown(() => { rmSync(directory, { recursive: true, force: true }) })
  const app = await appWith(t, { storage: 'file', directory })
  const token = await checkSurfaces(t, app)
  await (profilerOf(app).storage as unknown as { idle: () => Promise<void> }).idle()
  const files = filesUnder(directory)
  t.ok(files.some((file) => readFileSync(file, 'utf8').includes('"requirepass","******"')), 'the profile is in a file')
  t.same(files.filter((file) => readFileSync(file, 'latin1').includes(MARK)), [], 'no file holds a password')
  for (const args of [['profile', fixture('profiled-app.mjs'), token, '--json'], ['profile', fixture('profiled-app.mjs'), token]]) {
    const printed = runCli(args, { PROFILER_STORAGE: 'file', PROFILER_DIR: directory })
    t.equal(printed.status, 0, printed.stderr)
    t.match(printed.stdout, /cache/, 'the console prints the Cache panel\'s figure')
    t.notMatch(printed.stdout + printed.stderr, MARK, 'the console')
  }
})

t.test('Redis storage: no password in its keys, nor in what the console prints', async (t) => {
  const storageClient = new Redis(redis.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 1 })
  await storageClient.connect()
  t.teardown(() => { storageClient.disconnect() })
  const app = await appWith(t, { storage: 'redis', redis: { client: storageClient } })
  const token = await checkSurfaces(t, app)
  const stored: string[] = []
  for (const key of await admin.keys('fastify-kernel:*')) {
    const type = await admin.type(key)
    if (type === 'string') stored.push((await admin.get(key))!)
    else if (type === 'zset') stored.push(...await admin.zrange(key, '0', '-1'))
    else if (type === 'hash') stored.push(...Object.values(await admin.hgetall(key)))
  }
  t.ok(stored.some((value) => value.includes('"requirepass","******"')), 'the profile is in Redis')
  t.same(stored.filter((value) => value.includes(MARK)), [], 'no key holds a password')
  const printed = runCli(['profile', fixture('profiled-app.mjs'), token, '--json'], { PROFILER_STORAGE: 'redis', REDIS_PORT: String(redis.port) })
  t.equal(printed.status, 0, printed.stderr)
  t.match(printed.stdout, token)
  t.notMatch(printed.stdout + printed.stderr, MARK, 'the console')
})
