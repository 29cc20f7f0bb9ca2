/**
 * An app that already uses OpenTelemetry gets its spans into the profile: the real pg
 * instrumentation against Debian's PostgreSQL, through `fastify-kernel/opentelemetry`'s span
 * processor. Statements are `db` spans, other spans `otel` ones; concurrent requests never mix,
 * even through a pool that hands its connections from one request to the next.
 */
import t from 'tap'
import { createRequire } from 'node:module'
import { createServer, request as httpRequest } from 'node:http'
import { once } from 'node:events'
import { tracingChannel } from 'node:diagnostics_channel'
import type { TracingChannelSubscribers } from 'node:diagnostics_channel'
import { SpanStatusCode, trace } from '@opentelemetry/api'
import type { Span as OtelSpan } from '@opentelemetry/api'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { registerInstrumentations } from '@opentelemetry/instrumentation'
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg'
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http'
import type pg from 'pg'
import { profilerOf, buildApp } from '../helpers.js'
import { StageChannel } from '../../index.js'
import type { StageMessage } from '../../index.js'
import { host, profiled, spansCollector } from './helpers.js'
import { TestPostgres } from '../postgres/server.js'
import { KernelSpanProcessor, RECORDED_BY_CHANNELS } from '../../src/profiler/opentelemetry.js'
import type { Span } from '../../src/profiler/spans.js'

// the app's own OpenTelemetry set-up, as its instrumentation file would have it: the kernel's
// processor beside the exporter's
const exported = new InMemorySpanExporter()
const provider = new NodeTracerProvider({ spanProcessors: [new KernelSpanProcessor(), new SimpleSpanProcessor(exported)] })
provider.register()
registerInstrumentations({ tracerProvider: provider, instrumentations: [new PgInstrumentation({ enhancedDatabaseReporting: true }), new HttpInstrumentation()] })
t.teardown(async () => { await provider.shutdown() })
// instrumentations patch modules as CommonJS requires them (an ESM app uses OpenTelemetry's loader hook)
const require = createRequire(import.meta.url)
const { Pool, Client } = require('pg') as typeof pg
const http = require('node:http') as typeof import('node:http')

const server = await TestPostgres.start(t)

const statementsOf = (spans: Span[]): string[] => spans.filter((span) => span.kind === 'db').map((span) => span.name)

/** GET over a real socket (the HTTP instrumentation starts the request's server span, as in the app); resolves to the X-Debug-Token. */
async function get (port: number, path: string): Promise<string> {
  return await new Promise((resolve, reject) => {
    httpRequest({ port, path, headers: { host } }, (res) => {
      res.resume()
      res.on('end', () => { resolve(String(res.headers['x-debug-token'])) })
    }).on('error', reject).end()
  })
}

/** The stage subscriber of docs/profiler.md ("OpenTelemetry"), as written there. */
function subscribeStages (): () => void {
  const tracer = trace.getTracer('fastify-kernel')
  const spans = new WeakMap<StageMessage, OtelSpan>()
  const finish = (message: StageMessage): void => {
    const span = spans.get(message)
    if (span === undefined || message.outcome === undefined) return // still running: asyncEnd follows
    span.setAttribute('kernel.outcome', message.outcome)
    if (message.outcome === 'threw') span.setStatus({ code: SpanStatusCode.ERROR, message: String(message.error) })
    span.end()
  }
  const subscriber: TracingChannelSubscribers<StageMessage> = {
    start (message) { spans.set(message, tracer.startSpan(message.stage)) },
    end: finish,
    asyncStart () {},
    asyncEnd: finish,
    error (message) { spans.get(message)?.recordException(message.error as Error) }
  }
  for (const name of Object.values(StageChannel)) tracingChannel<unknown, StageMessage>(name).subscribe(subscriber)
  return () => { for (const name of Object.values(StageChannel)) tracingChannel<unknown, StageMessage>(name).unsubscribe(subscriber) }
}

t.test('a request\'s statements are in its Database panel, masked as mysql2\'s; other spans are otel spans', async (t) => {
  const setup = new Client({ connectionString: server.url })
  await setup.connect()
  await setup.query('CREATE TABLE users (id int, api_key text)')
  await setup.query("INSERT INTO users VALUES (7, 'sk-live-123')")
  await setup.end()
  const app = await buildApp({ debug: true }, {}, (app) => {
    spansCollector(app)
    app.get('/users/me', async () => {
      const client = new Client({ connectionString: server.url })
      await client.connect()
      try {
        const { rows } = await client.query('SELECT id FROM users WHERE api_key = $1 AND id > $2', ['sk-live-123', 0])
        await client.query('SELECT * FROM missing_table').catch(() => undefined)
        return rows[0]
      } finally {
        await client.end()
      }
    })
  })
  t.teardown(() => app.close())

  const { res, profile } = await profiled(app, { url: '/users/me' })
  t.same(res.json(), { id: 7 })
  const [select, missing] = profile.collected.db!.statements
  t.match(select, {
    statement: 'SELECT id FROM users WHERE api_key = $1 AND id > $2',
    system: 'postgresql',
    driver: 'pg',
    database: 'postgres',
    // the value bound to api_key is masked by the redaction policy, the other shown
    params: ['******', '0']
  })
  t.equal(select.error, undefined)
  t.ok(typeof select.duration === 'number' && select.duration >= 0 && select.start >= 0, 'timed from the request\'s start')
  t.match(missing, { statement: 'SELECT * FROM missing_table', error: 'relation "missing_table" does not exist' })
  t.notOk(JSON.stringify(profile).includes('sk-live-123'), 'the secret is nowhere in the profile')
  const spans = profile.collected.spans!.spans
  t.same(spans.filter((span) => span.kind === 'db').map((span) => span.name), ['SELECT id FROM users WHERE api_key = $1 AND id > $2', 'SELECT * FROM missing_table'])
  // pg is instrumented by the profiler itself: the instrumentation's spans (its statements,
  // pg.connect) would be twins, and are left out
  t.same(spans.filter((span) => span.kind === 'otel'), [], 'no OpenTelemetry span of pg\'s: each statement once')
  // and the app's exporter got them all the same
  t.ok(exported.getFinishedSpans().some((span) => span.attributes['db.query.text'] === 'SELECT * FROM missing_table'))
})

t.test('statements outside a profiled request are not attributed to any', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    spansCollector(app)
    app.get('/nothing', async () => 'none')
  })
  t.teardown(() => app.close())
  const pool = new Pool({ connectionString: server.url, max: 1 })
  t.teardown(() => pool.end())
  // at start-up, and in a timer the request did not start
  await pool.query('SELECT 1 AS startup')
  const during = new Promise((resolve) => setTimeout(resolve, 0)).then(async () => await pool.query('SELECT 2 AS timer'))
  const { profile } = await profiled(app, { url: '/nothing' })
  await during
  t.same(statementsOf(profile.collected.spans!.spans), [])
})

t.test('20 concurrent requests through a pool of 2 connections each get exactly their own statements', async (t) => {
  const pool = new Pool({ connectionString: server.url, max: 2 })
  t.teardown(() => pool.end())
  const app = await buildApp({ debug: true }, {}, (app) => {
    spansCollector(app)
    app.get('/report/:n', async (request) => {
      const { n } = request.params as { n: string }
      // the literal makes each request's statements its own; the pool makes requests wait for
      // each other's connections (pg-pool hands a freed connection to the next waiting query
      // inside the finishing query's callback: Node's async context is the other request's)
      await pool.query(`SELECT ${Number(n)} AS request, pg_sleep(0.005)`)
      await pool.query(`SELECT ${Number(n)} AS again`)
      return n
    })
  })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }

  // real sockets: the HTTP instrumentation starts each request's server span, as in the app
  const ids = Array.from({ length: 20 }, (_value, index) => index + 1)
  const tokens = await Promise.all(ids.map(async (n) => await get(port, `/report/${n}`)))
  await app.kernelProfiler!.settled()
  for (const [index, token] of tokens.entries()) {
    const n = ids[index]
    const profile = await profilerOf(app).storage.load(token)
    t.same(statementsOf(profile!.collected.spans!.spans), [`SELECT ${n} AS request, pg_sleep(0.005)`, `SELECT ${n} AS again`], `request ${n}: its own two statements`)
  }
})

t.test('spans of instrumentations whose library the profiler records by its own channels are left out', async (t) => {
  const other = createServer((_request, response) => { response.end('other') }).listen(0, '127.0.0.1')
  await once(other, 'listening')
  t.teardown(() => other.close())
  const { port } = other.address() as { port: number }
  const app = await buildApp({ debug: true }, {}, (app) => {
    spansCollector(app)
    app.get('/outgoing', async () => {
      // node:http is recorded from its diagnostics channels: its OpenTelemetry span would be a twin
      await new Promise<void>((resolve, reject) => { http.request({ port, path: '/' }, (res) => { res.resume().on('end', resolve) }).on('error', reject).end() })
      return 'done'
    })
  })
  t.teardown(() => app.close())
  const { profile } = await profiled(app, { url: '/outgoing' })
  t.same(profile.collected.spans!.spans.filter((span) => span.kind === 'otel'), [])
  t.ok(exported.getFinishedSpans().some((span) => span.instrumentationScope.name === '@opentelemetry/instrumentation-http' && span.kind === 2), 'the exporter still got the HTTP client span')
})

t.test('the other way: OpenTelemetry sees the kernel\'s stages as spans of the request\'s trace (the docs\' subscriber)', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    spansCollector(app)
    app.get('/traced', async () => 'traced')
  })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  t.teardown(subscribeStages())
  exported.reset()

  const token = await get(port, '/traced')
  await get(port, '/missing')
  await app.kernelProfiler!.settled()
  const finished = exported.getFinishedSpans()
  const servers = finished.filter((span) => span.kind === 1)
  t.equal(servers.length, 2, 'one server span a request')
  const [traced, missing] = servers.map((server) => finished
    .filter((span) => span.parentSpanContext?.spanId === server.spanContext().spanId && span.instrumentationScope.name === 'fastify-kernel')
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]))
  t.same(traced.map((span) => span.name), ['kernel.request', 'kernel.controller', 'kernel.controller_arguments', 'kernel.response', 'kernel.finish_request', 'kernel.terminate'], 'every stage, in order, under the request\'s server span')
  t.same(traced.map((span) => span.attributes['kernel.outcome']), ['completed', 'completed', 'completed', 'completed', 'completed', 'completed'])
  const [request, exception] = missing
  t.match(request, { name: 'kernel.request', attributes: { 'kernel.outcome': 'threw' }, status: { code: SpanStatusCode.ERROR, message: /No route found for "GET http:\/\/example.test\/missing"/ } })
  t.match(exception, { name: 'kernel.exception', attributes: { 'kernel.outcome': 'responded' } })
  // the kernel's own stages are on the profile's timeline already: not twice
  const profile = await profilerOf(app).storage.load(token)
  t.same(profile!.collected.spans!.spans.filter((span) => span.name.startsWith('kernel.')), [])
})

t.test('skip: which tracers are left out is the app\'s choice', async (t) => {
  // two more providers of the app's: one keeping every span, one leaving out a tracer of its own
  const everything = new BasicTracerProvider({ spanProcessors: [new KernelSpanProcessor({ skip: [] })] })
  const mine = new BasicTracerProvider({ spanProcessors: [new KernelSpanProcessor({ skip: [...RECORDED_BY_CHANNELS, 'my-tracer'] })] })
  const app = await buildApp({ debug: true }, {}, (app) => {
    spansCollector(app)
    app.get('/tracers', async () => {
      everything.getTracer('@opentelemetry/instrumentation-mysql2').startSpan('kept by skip: []').end()
      mine.getTracer('my-tracer').startSpan('left out').end()
      mine.getTracer('@opentelemetry/instrumentation-undici').startSpan('left out too').end()
      mine.getTracer('graphql').startSpan('kept').end()
      return 'ok'
    })
  })
  t.teardown(() => app.close())
  const { profile } = await profiled(app, { url: '/tracers' })
  t.same(profile.collected.spans!.spans.map((span) => `${span.kind} ${span.name}`), ['otel kept by skip: []', 'otel kept'])
})
