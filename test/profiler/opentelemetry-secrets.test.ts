/**
 * Secrets in an app's OpenTelemetry spans. `db.query.parameter.<key>` (semantic conventions): a
 * positional parameter is reported under its 0-based index (`db.query.parameter.0` for `$1`)
 * and masked by the column its placeholder goes to, as a driver's positional values are; a named
 * one by its name. A Redis instrumentation's command (kept with `skip: []`) loses its passwords
 * as the Cache panel's commands do.
 */
import t from 'tap'
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base'
import { buildApp } from '../helpers.js'
import { page, profiled } from './helpers.js'
import { KernelSpanProcessor } from '../../src/profiler/opentelemetry.js'

const provider = new BasicTracerProvider({ spanProcessors: [new KernelSpanProcessor()] })
const tracer = provider.getTracer('@my/db-instrumentation')
t.teardown(async () => { await provider.shutdown() })

function statement (text: string, parameters: Record<string, string>, system = 'postgresql'): void {
  const attributes: Record<string, string> = { 'db.system.name': system, 'db.query.text': text }
  for (const [key, value] of Object.entries(parameters)) attributes[`db.query.parameter.${key}`] = value
  tracer.startSpan('db', { attributes }).end()
}

t.test('positional parameters by their index, masked by the column of their placeholder; named ones by name', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/otel-params', async () => {
      statement('UPDATE users SET api_key = $1 WHERE id = $2', { 0: 'sk-live-zz1', 1: '7' })
      statement('SELECT id FROM users WHERE id = $2 AND password_hash = $1', { 1: '7', 0: 'hash-zz2' })
      statement('INSERT INTO tokens (user_id, refresh_token) VALUES (?, ?)', { 0: '7', 1: 'rt-zz3' })
      statement('SELECT id FROM users WHERE name = :name AND secret = :s', { name: 'ada', s: 'zz4' })
      statement('UPDATE users SET api_key = $1 WHERE id = $3', { 0: 'sk-zz5', 2: '9' })
      return 'ok'
    })
  })
  t.teardown(() => app.close())
  const { profile, token } = await profiled(app, { url: '/otel-params' })
  t.same(profile.collected.db!.statements.map((s) => s.params), [
    ['******', '7'],
    ['******', '7'],
    ['7', '******'],
    { name: 'ada', s: '******' },
    { 0: '******', 2: '9' }
  ], 'each positional value masked by its placeholder\'s column; a sparse set keeps its indexes')
  t.notMatch(JSON.stringify(profile), /zz\d/, 'no secret in the profile')
  const panel = await page(app, `/_profiler/${token}?panel=db`)
  t.match(panel.body, 'UPDATE users SET api_key &#x3D; $1 WHERE id &#x3D; $2')
  t.notMatch(panel.body, /zz\d/, 'nor on the Database panel')
})

t.test('a Redis instrumentation\'s commands: passwords masked as on the Cache panel', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/otel-redis', async () => {
      statement('config SET requirepass zz6', {}, 'redis')
      statement('ACL SETUSER ada on >zz7 ~*', {}, 'redis')
      statement('get cart:7', {}, 'redis')
      return 'ok'
    })
  })
  t.teardown(() => app.close())
  const { profile, token } = await profiled(app, { url: '/otel-redis' })
  t.same(profile.collected.db!.statements.map((s) => s.statement), ['config SET requirepass ******', 'ACL SETUSER ada on >****** ~*', 'get cart:7'])
  t.notMatch(JSON.stringify(profile), /zz\d/, 'no secret in the profile')
  t.notMatch((await page(app, `/_profiler/${token}?panel=db`)).body, /zz\d/, 'nor on the Database panel')
  t.notMatch((await page(app, `/_profiler/${token}?panel=time`)).body, /zz\d/, 'nor on the timeline')
})
