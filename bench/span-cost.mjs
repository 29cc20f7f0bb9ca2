// The profiler's main-thread cost per span, measured in this process without a network: the
// libraries' own channel events are published as they publish them (ioredis, mysql2, undici), in
// a profiled request's async context, through the kernel's real handlers; then the profile's work
// on them (format: mask and cut; collect; serialise). Medians of 101 rounds of 200 spans (a garbage collection falls in a few rounds, not in the median).
// Each kind twice: without and with the span's origin (the profiler's `origins` option: a stack
// captured per span, resolved to the app's frame when the profile is built). The calls are made
// 60 frames deep, as a route handler's are (Fastify's frames below it), so that each capture
// takes its full count of frames; the fetch goes through a stand-in for the global `fetch`
// (undici publishes 25 frames inside it: the capture starts below `fetch`).
import { channel, tracingChannel } from 'node:diagnostics_channel'
import { KernelContext } from '../dist/src/kernel/context.js'
import { runInUnit } from '../dist/src/kernel/async-context.js'
import { SpanList } from '../dist/src/profiler/spans.js'
import { Recording } from '../dist/src/profiler/recording.js'
import { captureOf, handleSpansOf } from '../dist/src/profiler/integrations.js'
import { httpClient } from '../dist/src/profiler/panels/http-client/index.js'
import { db } from '../dist/src/profiler/panels/db/index.js'
import { cache } from '../dist/src/profiler/panels/cache/index.js'
import { instrumentedCopy } from '../dist/src/profiler/instrument/notices.js'
import { cacheCollector } from '../dist/src/profiler/panels/cache/collector.js'
import { dbCollector } from '../dist/src/profiler/panels/db/collector.js'
import { httpClientCollector } from '../dist/src/profiler/panels/http-client/collector.js'
import { Redactor } from '../dist/src/http/redact.js'
import { pgInstrumentation } from '../dist/src/profiler/panels/db/pg.js'
import { OriginResolver } from '../dist/src/profiler/origin.js'
import { SourceExcerpts } from '../dist/src/errors/source-excerpt.js'

const N = 200
const DEPTH = 60
const redactor = new Redactor()
const origins = new OriginResolver(new SourceExcerpts({ root: process.cwd() }))

/** `fn` called `depth` frames deep: the stack of a route handler's call */
function deep (depth, fn) {
  return depth === 0 ? fn() : deep(depth - 1, fn) + 0
}

function traced (name, context) {
  const ch = tracingChannel(name)
  return () => {
    const ctx = context()
    ch.start.publish(ctx)
    ch.end.publish(ctx)
    ctx.result = [{ id: 1 }]
    ch.asyncStart.publish(ctx)
    ch.asyncEnd.publish(ctx)
  }
}

const create = channel('undici:request:create')
const headers = channel('undici:request:headers')
const trailers = channel('undici:request:trailers')
const responseHeaders = [Buffer.from('content-type'), Buffer.from('text/plain'), Buffer.from('content-length'), Buffer.from('2')]

// pg publishes nothing: the profiler instruments Client#query; here a client whose query() answers
// at once, so that what is measured is the instrumentation (pg's own work is the app's anyway)
class PgClient {
  constructor () { this.database = 'app' }
  query () { return Promise.resolve({ rowCount: 1, rows: [{ id: 1 }] }) }
}
const pgClient = new PgClient()

const kinds = {
  'cache (ioredis:command)': { call: traced('ioredis:command', () => ({ command: 'get', args: ['bench:key'], database: 0, serverAddress: '127.0.0.1', serverPort: 6379 })), collector: cacheCollector(50) },
  'db (mysql2:execute)': { call: traced('mysql2:execute', () => ({ query: 'SELECT id, name FROM users WHERE id = ?', values: [42], database: 'app', serverAddress: '127.0.0.1', serverPort: 3306 })), collector: dbCollector({ totalMs: 100, slowMs: 10 }) },
  'db (pg, instrumented)': { call: () => { pgClient.query('SELECT id, name FROM users WHERE id = $1', [42]) }, collector: dbCollector({ totalMs: 100, slowMs: 10 }) },
  'http_client (undici)': {
    call: () => globalThis.fetch(),
    collector: httpClientCollector({ totalMs: 1000, slowMs: 500 })
  }
}

/** What the global fetch does before its request leaves: undici's events, published inside `fetch()` */
function fetchStandIn () {
  const request = { origin: 'http://127.0.0.1:8080', path: '/api/orders?page=2', method: 'GET', headers: ['accept', '*/*', 'user-agent', 'node'] }
  create.publish({ request })
  headers.publish({ request, response: { statusCode: 200, headers: responseHeaders, statusText: 'OK' } })
  trailers.publish({ request, trailers: [] })
}

function round ({ call, collector }, withOrigins) {
  const context = new KernelContext()
  const recording = new Recording('bench', 'request', undefined, undefined, context, undefined, 0, new SpanList(N, context.startedAt, withOrigins ? origins : undefined))
  context.set('profiler', recording)
  let start = performance.now()
  runInUnit(context, () => deep(DEPTH, () => { for (let i = 0; i < N; i++) call() }))
  const record = performance.now() - start
  start = performance.now()
  // as the unit ends (each span keeps plain values, its origin resolved), then as it is read
  recording.spans.settle()
  recording.spans.format(redactor)
  const data = collector.collect({ context, redactor })
  const after = JSON.stringify(data).length > 0 ? performance.now() - start : 0
  return { record: record * 1000 / N, after: after * 1000 / N }
}

/** Per kind: µs per span while the request runs (the channel handlers and the span) and after the response (settle, mask, collect, serialise), without and with its origin. */
export function spanCost () {
  // the HTTP Client, Database and Cache panels' channels and span handling, as a profiler sets them up
  const integrations = [httpClient, db, cache]
  for (const integration of integrations) handleSpansOf(integration)
  const releases = integrations.map((integration) => captureOf(integration).retain())
  const release = () => { for (const done of releases) done() }
  const unpatch = pgInstrumentation.instrument({ Client: PgClient }, instrumentedCopy(pgInstrumentation, undefined))
  const realFetch = globalThis.fetch
  globalThis.fetch = fetchStandIn
  const lines = []
  const added = []
  try {
    for (const [name, kind] of Object.entries(kinds)) {
      const figures = [false, true].map((withOrigins) => {
        for (let i = 0; i < 200; i++) round(kind, withOrigins) // warm-up: the JIT
        const rounds = Array.from({ length: 101 }, () => round(kind, withOrigins))
        const median = (key) => rounds.map((r) => r[key]).sort((a, b) => a - b)[50]
        return { record: median('record'), after: median('after') }
      })
      const [off, on] = figures
      lines.push(`| ${name} | ${off.record.toFixed(2)} | ${off.after.toFixed(2)} | ${on.record.toFixed(2)} | ${on.after.toFixed(2)} |`)
      added.push(`${name.split(' ')[0]} +${(on.record - off.record).toFixed(2)} µs in the request, +${(on.after - off.after).toFixed(2)} µs after it`)
    }
  } finally {
    unpatch?.()
    globalThis.fetch = realFetch
    release()
  }
  return [
    'Span cost in this process (no network; the libraries\' events through the kernel\'s handlers), µs of main thread per span, medians; without, then with its origin (`origins`, on by default):',
    '| span | in the request (handler, span) | after the response (settle, mask, collect, serialise) | in the request, with origin | after the response, with origin |',
    '|---|---:|---:|---:|---:|',
    ...lines,
    `The origin of a span costs: ${added.join('; ')}.`
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(spanCost())
