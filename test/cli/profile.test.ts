/**
 * `fastify-kernel profile <app> <token|latest>`: a stored profile's summary, read by the console
 * (another process) from the app's storage, while the app that stored it still runs.
 */
import t from 'tap'
import type { Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { buildOnce, root } from '../build-once.js'
import { fixture, runCli } from './run-cli.js'
import { TestRedis } from '../redis/server.js'
import type { ProfileReport } from '../../plugins/console.js'
import { profilerOf } from '../helpers.js'

const APP = fixture('profiled-app.mjs')

/** The fixture app in this process (the "server"), on the storage `env` names. */
async function server (t: Test, env: Record<string, string>): Promise<FastifyInstance> {
  buildOnce()
  Object.assign(process.env, env)
  t.teardown(() => { for (const name of Object.keys(env)) delete process.env[name] })
  const { build } = await import(pathToFileURL(join(root, APP)).href) as { build: () => Promise<FastifyInstance> }
  const app = await build()
  await app.ready()
  t.teardown(() => app.close())
  return app
}

async function tokenOf (app: FastifyInstance, url: string): Promise<string> {
  const res = await app.inject({ url, headers: { host: 'example.test' } })
  const profile = await app.kernelProfiler!.profileOf(res)
  return profile.token
}

t.test('file storage: the console reads the profiles of a server that still writes its folder', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kernel-cli-profile-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const env = { PROFILER_STORAGE: 'file', PROFILER_DIR: dir }
  const app = await server(t, env)
  const order = await tokenOf(app, '/orders/7')
  const boom = await tokenOf(app, '/boom')
  await (profilerOf(app).storage as unknown as { idle: () => Promise<void> }).idle()

  const latest = runCli(['profile', APP, 'latest'], env)
  t.equal(latest.status, 0, latest.stderr)
  const lines = latest.stdout.split('\n')
  t.equal(lines[0], `Profile ${boom}  GET http://example.test/boom`)
  t.match(lines[1], /^ {2}Status {4}500$/)
  t.match(latest.stdout, /^ {2}Duration {2}\d+\.\d ms$/m)
  t.match(latest.stdout, /^ {2}Storage {3}file$/m)
  t.match(latest.stdout, /^Panel +Label +Figure$/m)
  t.match(latest.stdout, /^exception +Exception +1$/m, 'each panel with its figure')
  t.notOk(latest.stdout.includes('\u001b['), 'no colours when piped')

  const json = runCli(['profile', APP, order, '--json'], env)
  t.equal(json.status, 0, json.stderr)
  const report = JSON.parse(json.stdout) as ProfileReport
  t.same(report.storage, { kind: 'file', shared: true })
  t.equal(report.profile!.token, order)
  t.equal(report.profile!.statusCode, 200)
  t.equal(report.profile!.url, 'http://example.test/orders/7')
  t.same(report.profile!.panels.find((panel) => panel.name === 'dump'), { name: 'dump', label: 'Dumps', figure: '1' })
  t.ok(report.profile!.panels.some((panel) => panel.name === 'time' && /ms$/.test(panel.figure ?? '')))

  // the server still owns its folder: it goes on storing after the console read it
  const after = await tokenOf(app, '/orders/8')
  t.equal((await profilerOf(app).storage.load(after))?.url, 'http://example.test/orders/8')

  const missing = runCli(['profile', APP, 'abcdef'], env)
  t.equal(missing.status, 1)
  t.match(missing.stderr, 'no profile "abcdef" in the file storage')
  const bad = runCli(['profile', APP, 'not-a-token'], env)
  t.equal(bad.status, 2)
  t.match(bad.stderr, '"not-a-token" is not a profile token')
  t.equal(runCli(['profile', APP], env).status, 2, 'usage')
})

t.test('memory storage: the console says it cannot see another process\'s profiles', async (t) => {
  const result = runCli(['profile', APP, 'latest'], { PROFILER_STORAGE: 'memory' })
  t.equal(result.status, 1)
  t.match(result.stderr, 'no profile in the memory storage')
  t.match(result.stderr, 'only the process that served a request has its profile')
})

t.test('Redis storage: shared by every process', async (t) => {
  const redis = await TestRedis.start(t)
  const env = { PROFILER_STORAGE: 'redis', REDIS_PORT: String(redis.port) }
  const app = await server(t, env)
  const token = await tokenOf(app, '/orders/42')
  const result = runCli(['profile', APP, token, '--json'], env)
  t.equal(result.status, 0, result.stderr)
  const report = JSON.parse(result.stdout) as ProfileReport
  t.same(report.storage, { kind: 'redis', shared: true })
  t.equal(report.profile!.url, 'http://example.test/orders/42')
})
