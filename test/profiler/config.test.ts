import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import view from '@fastify/view'
import Handlebars from 'handlebars'
import { buildApp } from '../helpers.js'
import { root } from '../build-once.js'
import { page, profiled } from './helpers.js'
import { pluginTree } from '../../src/profiler/panels/config/collector.js'

const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version

t.test('the configuration panel: versions, flags, features and their stores, the plugin tree', async (t) => {
  const app = await buildApp({
    debug: true,
    trace: false,
    session: { secret: 'a'.repeat(40) },
    locale: { enabled: ['en', 'fr'] },
    security: { firewalls: [{ name: 'main', httpBasic: { realm: 'x' } }] },
    profiler: { maxSpans: 42 }
  }, {}, (app) => { app.register(view, { engine: { handlebars: Handlebars.create() } }) })
  t.teardown(() => app.close())
  const { profile, token } = await profiled(app, { url: '/about' })
  const config = profile.collected.config!
  t.same(config.versions, { node: process.versions.node, fastify: app.version, kernel: version })
  t.equal(config.debug, true)
  t.equal(config.trace, false)
  const feature = (name: string) => config.features.find((f) => f.name === name)!
  t.same(feature('profiler').details.find((d) => d.name === 'storage'), { name: 'storage', value: 'memory' })
  t.same(feature('profiler').details.find((d) => d.name === 'maxSpans'), { name: 'maxSpans', value: '42' })
  t.same(feature('session'), { name: 'session', enabled: true, details: [{ name: 'store', value: 'memory (this process)' }] })
  t.same(feature('security').details, [{ name: 'firewalls', value: 'main' }, { name: 'login throttling store', value: 'memory (this process)' }])
  t.same(feature('locale').details, [{ name: 'enabled', value: 'en, fr' }])
  t.equal(feature('trusted hosts').enabled, false)
  t.match(config.plugins, /^root \d+ ms\n/)
  t.match(config.plugins, /├─┬ fastify-kernel \d+ ms/)
  t.match(config.plugins, /@fastify\/view \d+ ms/, 'the app\'s own plugins')
  t.notMatch(config.plugins, 'bound _after', 'without avvio\'s own steps')
  t.equal(config.process.pid, process.pid)

  const body = (await page(app, `/_profiler/${token}?panel=config`)).body
  t.match(body, /<div class="metric"><div class="value">\d+\.\d+\.\d+<\/div><div class="name">fastify-kernel<\/div><\/div>/)
  t.match(body, /<tr data-feature="session"><td class="mono">session<\/td><td><span class="status status-success">on<\/span>/)
  t.match(body, /<tr data-feature="trusted hosts"><td class="mono">trusted hosts<\/td><td><span class="status status-none">off<\/span>/)
  t.match(body, /<pre id="config-plugins">root \d+ ms\n├─┬ fastify-kernel/)
})

t.test('the plugin tree without avvio\'s steps is drawn again; a plugin registered in one moves up', async (t) => {
  const printed = [
    'root 10 ms',
    '├── bound _after 1 ms',
    '├─┬ fastify-kernel 8 ms',
    '│ ├─┬ kernelTemplates 3 ms',
    '│ │ └── @fastify/view 2 ms',
    '│ └── bound _after 0 ms',
    '├─┬ bound _after 0 ms',
    '│ └── registered in an after() 0 ms',
    '└── bound _after 0 ms',
    ''
  ].join('\n')
  t.equal(pluginTree(printed), [
    'root 10 ms',
    '├─┬ fastify-kernel 8 ms',
    '│ └─┬ kernelTemplates 3 ms',
    '│   └── @fastify/view 2 ms',
    '└── registered in an after() 0 ms'
  ].join('\n'))
})
