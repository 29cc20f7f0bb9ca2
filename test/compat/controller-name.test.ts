/**
 * `_controller` of an anonymous handler is where its route was declared (`routes/users.ts:12`),
 * mapped to the TypeScript source when the app runs compiled code.
 */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import ts from 'typescript'
import Fastify from 'fastify'
import kernel from '../../index.js'
import { buildOnce, root } from '../build-once.js'

const fixture = resolve(import.meta.dirname, 'fixtures/users-routes.ts')
const ROUTE_LINE = readFileSync(fixture, 'utf8').split('\n').findIndex((line) => line.includes('app.get<')) + 1

t.test('debug: an anonymous handler is named by its route\'s declaration, a named one by its name', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(kernel, { debug: true, profiler: false })
  const declared = new Error().stack!.split('\n')[1].match(/:(\d+):\d+\)?$/)![1]
  app.get('/inline', async (request) => request.kernel?.attributes._controller)
  app.get('/named', async function showUser (request) { return request.kernel?.attributes._controller })
  await app.ready()
  t.equal((await app.inject('/inline')).body, `test/compat/controller-name.test.ts:${Number(declared) + 1}`)
  t.equal((await app.inject('/named')).body, 'showUser')
  const production = Fastify()
  t.teardown(() => production.close())
  await production.register(kernel)
  production.get('/inline', async (request) => request.kernel?.attributes._controller)
  t.equal((await production.inject('/inline')).body, 'anonymous', 'production reads no stack and no source map for it')
})

t.test('compiled code: the TypeScript file and line, relative to the project root', async (t) => {
  buildOnce()
  const dir = mkdtempSync(join(tmpdir(), 'kernel-controller-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const out = ts.transpileModule(readFileSync(fixture, 'utf8'), {
    fileName: 'users-routes.ts',
    compilerOptions: { sourceMap: true, module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 }
  })
  writeFileSync(join(dir, 'users-routes.mjs'), out.outputText.replace(/\/\/# sourceMappingURL=\S+/, '//# sourceMappingURL=users-routes.mjs.map'))
  writeFileSync(join(dir, 'users-routes.mjs.map'), out.sourceMapText!)
  copyFileSync(fixture, join(dir, 'users-routes.ts'))
  t.not(out.outputText.split('\n').findIndex((line) => line.includes('app.get(')) + 1, ROUTE_LINE, 'the compiled line differs (else this proves nothing)')
  writeFileSync(join(dir, 'run.mjs'), `
import Fastify from ${JSON.stringify(join(root, 'node_modules/fastify/fastify.js'))}
import kernel from ${JSON.stringify(join(root, 'dist/index.js'))}
import { usersRoutes } from './users-routes.mjs'
const app = Fastify()
await app.register(kernel, { debug: true, profiler: false })
usersRoutes(app)
const res = await app.inject({ url: '/users/7' })
process.stdout.write(res.body)
await app.close()
`)
  // tap adds a NODE_OPTIONS whose loader enables source maps: `env -u` drops it
  const output = JSON.parse(execFileSync('env', ['-u', 'NODE_OPTIONS', process.execPath, 'run.mjs'], { cwd: dir, env: { PATH: process.env.PATH }, encoding: 'utf8' })) as { controller: string }
  t.equal(output.controller, `users-routes.ts:${ROUTE_LINE}`)
})
