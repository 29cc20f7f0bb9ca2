import t from 'tap'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { root } from '../build-once.js'
import { fixture, runCli } from './run-cli.js'
import type { ListedRoute } from '../../plugins/console.js'

t.test('routes: every route with name, methods, path with requirements, prefix, plugin and flags', async (t) => {
  const { status, stdout, stderr } = runCli(['routes', fixture('build-app.mjs')])
  t.equal(status, 0, stderr)
  const lines = stdout.trimEnd().split('\n')
  t.match(lines[0], /^Name\s+Method\s+Path\s+Prefix\s+Plugin\s+Flags$/)
  t.match(lines[1], /^early_item\s+GET\s+\/early\/\{id<\^\\d\+\$>\}\s+fastify$/, 'a route registered before the kernel: named, first, with its requirement')
  t.match(stdout, /\nitem\s+GET\s+\/items\/\{id<\^\\d\+\$>\}\s+fastify\s+isGranted: ROLE_ADMIN\n/)
  t.match(stdout, /\nform\s+GET\|POST\s+\/form\s+fastify\n/)
  t.match(stdout, /\napi_order\s+GET\s+\/api\/orders\/\{id\}\s+\/api\s+api\n/, 'prefix and the plugin that registered it')
  t.match(stdout, /\ndelete_api_orders_id\s+DELETE\s+\/api\/orders\/\{id\}\s+\/api\s+api\n/, 'a default name')
  t.notOk(stdout.includes('\u001b['), 'no colours when piped')
  t.equal(lines.length, 8, 'seven routes, HEAD twins not listed apart')
})

t.test('routes --json, and a filter by name or path', async (t) => {
  const json = runCli(['routes', fixture('build-app.mjs'), '--json'])
  t.equal(json.status, 0)
  const routes = JSON.parse(json.stdout) as ListedRoute[]
  t.same(routes.map((route) => route.name), ['early_item', 'hello', 'item', 'form', 'blog', 'api_order', 'delete_api_orders_id'])
  t.same(routes.find((route) => route.name === 'item'), {
    name: 'item',
    methods: ['GET'],
    path: '/items/{id<^\\d+$>}',
    url: '/items/:id(^\\d+$)',
    requirements: { id: '^\\d+$' },
    prefix: '',
    plugin: 'fastify',
    controller: 'showItem',
    flags: { isGranted: 'ROLE_ADMIN' }
  })

  const filtered = runCli(['routes', fixture('build-app.mjs'), 'ORDERS', '--json'])
  t.same((JSON.parse(filtered.stdout) as ListedRoute[]).map((route) => route.name), ['api_order', 'delete_api_orders_id'], 'by path, any case')
  const byName = runCli(['routes', fixture('build-app.mjs'), 'hello'])
  t.equal(byName.stdout.trimEnd().split('\n').length, 2)
  const none = runCli(['routes', fixture('build-app.mjs'), 'zzz'])
  t.equal(none.status, 1)
  t.match(none.stderr, 'no route name or path contains "zzz"')
})

t.test('routes of a plugin as fastify-cli loads it (the kernel registered in its own context)', async (t) => {
  const { status, stdout, stderr } = runCli(['routes', fixture('plugin-app.mjs')])
  t.equal(status, 0, stderr)
  t.match(stdout, /\ncontact\s+GET\s+\/\{_locale<\^\(en\|fr\)\$>\}\/contact\s+app\s+locale: \^\(en\|fr\)\$\n/)
  t.match(stdout, /\nabout\s+GET\s+\/about\s+app\n/)
})

t.test('routes of the example service: firewalls, access rules, isGranted and the profiler', async (t) => {
  const { status, stdout, stderr } = runCli(['routes', 'service/dist/app.js'], { APP_ENV: 'test', APP_DEBUG: '1' })
  t.equal(status, 0, stderr)
  t.match(stdout, /\nadmin\s+GET\s+\/admin\s+fastify\s+firewall: main, access: ROLE_ADMIN\n/)
  t.match(stdout, /\nprofile\s+GET\s+\/profile\s+fastify\s+firewall: main, isGranted: ROLE_USER\n/)
  t.match(stdout, /\napi_me\s+GET\s+\/api\/me\s+fastify\s+firewall: api, access: IS_AUTHENTICATED\n/)
  t.match(stdout, /\n_profiler\s+GET\s+\/_profiler\/\{token\}\s+fastify\s+firewall: main, profiler\n/)
})

t.test('modules that cannot be loaded or export no app: exit 2 with a clear message', async (t) => {
  const cases: Array<[string, RegExp]> = [
    [fixture('missing.mjs'), /cannot find the app module "test\/cli\/fixtures\/missing.mjs"/],
    [fixture('broken.mjs'), /cannot load the app module "test\/cli\/fixtures\/broken.mjs": this module is broken on purpose/],
    [fixture('no-app.mjs'), /exports no app: export a build\(\) function returning a Fastify instance, or a plugin as its default export/],
    [fixture('no-kernel.mjs'), /does not register the fastify-kernel plugin/]
  ]
  for (const [module, message] of cases) {
    const { status, stdout, stderr } = runCli(['routes', module])
    t.equal(status, 2, module)
    t.match(stderr, message, module)
    t.equal(stdout, '', module)
  }
  const usage = runCli(['routes'])
  t.equal(usage.status, 2)
  t.match(usage.stderr, 'usage: fastify-kernel routes <app>')
  const unknown = runCli(['routes', fixture('build-app.mjs'), '--bogus'])
  t.equal(unknown.status, 2)
  t.match(unknown.stderr, "Unknown option '--bogus'")
})

t.test('piped into head, the console exits quietly when the reader goes away', async (t) => {
  const bin = join(root, 'dist/cli/bin.js')
  const result = spawnSync('bash', ['-c', `"${process.execPath}" "${bin}" routes ${fixture('many-routes.mjs')} | head -1; echo "status=\${PIPESTATUS[0]}"`], { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
  t.match(result.stdout, /^Name +Method +Path/, 'head read the first line')
  t.match(result.stdout, /status=0\n$/, 'the command ended with its own status')
  t.equal(result.stderr, '', 'no EPIPE stack trace')
})
