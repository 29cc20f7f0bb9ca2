import t from 'tap'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildOnce, root } from './build-once.js'

t.test('the npm pack output installs and works in a separate Fastify app', { timeout: 300_000 }, async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'kernel-pack-'))
  t.teardown(() => rmSync(work, { recursive: true, force: true }))
  const npm = (args: string[], cwd: string): string => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })

  buildOnce()
  npm(['pack', '--ignore-scripts', '--pack-destination', work, '--silent'], root)
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'))
  t.ok(tarball, 'npm pack made a tarball')

  const app = join(work, 'app')
  execFileSync('mkdir', ['-p', app])
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', type: 'module', private: true }))
  npm(['install', '--no-audit', '--no-fund', '--prefer-offline', join(work, tarball!), 'fastify@5'], app)
  writeFileSync(join(app, 'check.mjs'), `
import Fastify from 'fastify'
import kernel, { kernelServerOptions, Stage } from 'fastify-kernel'
const app = Fastify(kernelServerOptions())
await app.register(kernel, { debug: true })
const seen = []
app.kernel.on(Stage.REQUEST, () => { seen.push('listener') }, { priority: 64 })
app.get('/hello/:name', async (request) => ({ hello: request.params.name }))
const ok = await app.inject({ url: '/hello/pack' })
const miss = await app.inject({ url: '/nope', headers: { host: 'pack.test', accept: 'application/json' } })
const page = await app.inject({ url: '/nope', headers: { host: 'pack.test' } })
console.log(JSON.stringify({ ok: ok.json(), detail: miss.json().detail, page: page.body.includes('ResourceNotFoundException'), seen }))
`)
  const out = execFileSync('node', ['check.mjs'], { cwd: app, encoding: 'utf8' })
  t.same(JSON.parse(out), {
    ok: { hello: 'pack' },
    detail: 'No route found for "GET http://pack.test/nope"',
    page: true,
    seen: ['listener', 'listener', 'listener']
  })
  // types ship with the package
  t.ok(readdirSync(join(app, 'node_modules/fastify-kernel/dist/src')).includes('index.d.ts'))
})
