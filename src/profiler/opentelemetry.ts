/**
 * `fastify-kernel/opentelemetry`: the spans an app's OpenTelemetry instrumentations make during a
 * profiled unit (a request, a job, a command…), in that unit's profile. SQL statements (any instrumentation following the
 * database semantic conventions: pg, mysql, mongodb…) become `db` spans, shown in the Database
 * panel; every other span an `otel` span on the timeline. Needs the optional peer dependencies
 * `@opentelemetry/api` and `@opentelemetry/sdk-trace-base`; only apps that import this subpath load them.
 */
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import type { Attributes, Context } from '@opentelemetry/api'
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { currentSpans } from './spans.js'
import type { SpanList } from './spans.js'
// the panels' data types (`profile.collected.db`…) for an app that imports this subpath alone
export type {} from './augmentations.js'

/**
 * Tracers whose spans the profile has already: instrumentations of libraries whose own
 * diagnostics channels the profiler records (fetch/undici, node:http clients, ioredis,
 * node-redis, mysql2) or that it instruments itself (pg), and `fastify-kernel`, the tracer a subscriber to the kernel's stage
 * channels names (the stages are on the timeline). The HTTP instrumentation's server span of a
 * request still attributes its children.
 */
export const RECORDED_BY_CHANNELS: readonly string[] = [
  'fastify-kernel',
  '@opentelemetry/instrumentation-http',
  '@opentelemetry/instrumentation-undici',
  '@opentelemetry/instrumentation-ioredis',
  '@opentelemetry/instrumentation-redis',
  '@opentelemetry/instrumentation-redis-4',
  '@opentelemetry/instrumentation-mysql2',
  // pg is instrumented by the profiler itself (src/profiler/io/pg.ts)
  '@opentelemetry/instrumentation-pg'
]

export interface KernelSpanProcessorOptions {
  /**
   * Instrumentation scope names whose spans are left out of profiles (their children are still
   * attributed). Default `RECORDED_BY_CHANNELS`; `[]` keeps every span (e.g. mysql2 < 3.20,
   * which publishes no channel of its own).
   */
  skip?: readonly string[]
}

interface Attribution {
  list: SpanList
  /** performance.now() when the span started; none for a parent adopted from outside */
  start?: number
}

/** Statements longer than this are cut in the span's name (the statement itself is kept whole for the panel). */
const NAME_LENGTH = 200
const INSTRUMENTATION_PREFIX = '@opentelemetry/instrumentation-'
const PARAMETER = 'db.query.parameter.'
const INDEX = /^(?:0|[1-9]\d*)$/

/**
 * A span processor for the app's tracer provider:
 *
 *     new NodeTracerProvider({ spanProcessors: [new KernelSpanProcessor(), yourExporterProcessor] })
 *
 * A span belongs to the profiled unit whose async context started it, or to its parent's
 * unit: a library that hands work between units through a queue of its own (pg-pool
 * giving a freed connection to the next waiting query) loses Node's async context, but
 * OpenTelemetry's instrumentations keep the span's parent (the request's server span). Spans
 * are added when they end, before the unit ends; outside a profiled unit (production,
 * start-up, the app's timers) the processor does nothing.
 */
export class KernelSpanProcessor implements SpanProcessor {
  private readonly attributed = new WeakMap<object, Attribution>()
  private readonly skip: ReadonlySet<string>

  constructor (options: KernelSpanProcessorOptions = {}) {
    this.skip = new Set(options.skip ?? RECORDED_BY_CHANNELS)
  }

  onStart (span: Span, parentContext: Context): void {
    const parent = trace.getSpan(parentContext)
    const inherited = parent === undefined ? undefined : this.attributed.get(parent)
    let list = inherited?.list
    if (list === undefined) {
      list = currentSpans()
      if (list === undefined) return
      // the request's entry span (the HTTP instrumentation's) started before the kernel's
      // context: its other children belong to this request, wherever they start
      if (parent !== undefined && (parent as Partial<ReadableSpan>).kind === SpanKind.SERVER) this.attributed.set(parent, { list })
    }
    this.attributed.set(span, { list, start: performance.now() })
  }

  onEnd (span: ReadableSpan): void {
    const attribution = this.attributed.get(span)
    if (attribution?.start === undefined || this.skip.has(span.instrumentationScope.name)) return
    const duration = span.duration[0] * 1e3 + span.duration[1] / 1e6
    const error = span.status.code === SpanStatusCode.ERROR ? errorOf(span) : undefined
    attribution.list.add({ ...describe(span), start: attribution.start, duration, ...(error === undefined ? {} : { error }) })
  }

  async forceFlush (): Promise<void> {}

  async shutdown (): Promise<void> {}
}

/** A `db` span for a statement (database semantic conventions, old and new names), else an `otel` span. */
function describe (span: ReadableSpan): { kind: string, name: string, data: Record<string, unknown> } {
  const attributes = span.attributes
  const system = attributes['db.system.name'] ?? attributes['db.system']
  const statement = attributes['db.query.text'] ?? attributes['db.statement']
  if (typeof system !== 'string' || typeof statement !== 'string') return { kind: 'otel', name: span.name, data: { attributes } }
  const scope = span.instrumentationScope.name
  const data: Record<string, unknown> = {
    system,
    statement,
    driver: scope.startsWith(INSTRUMENTATION_PREFIX) ? scope.slice(INSTRUMENTATION_PREFIX.length) : scope
  }
  const database = attributes['db.namespace'] ?? attributes['db.name']
  if (typeof database === 'string') data.database = database
  const rows = attributes['db.response.returned_rows']
  if (typeof rows === 'number') data.rows = rows
  const params = parametersOf(attributes)
  if (params !== undefined) data.params = params
  return { kind: 'db', name: statement.length > NAME_LENGTH ? statement.slice(0, NAME_LENGTH) : statement, data }
}

/**
 * The statement's parameters, where the instrumentation reports them: pg's
 * `enhancedDatabaseReporting` (`db.postgresql.values`), or the semantic conventions'
 * `db.query.parameter.<key>`: a name (masked by name), or the 0-based index of a positional
 * one (`db.query.parameter.0` for `$1`), given as a list, so that each is masked by the column
 * its placeholder goes to, as a driver's positional values are.
 */
function parametersOf (attributes: Attributes): unknown[] | Record<string, unknown> | undefined {
  const values = attributes['db.postgresql.values']
  if (Array.isArray(values)) return values
  let named: Record<string, unknown> | undefined
  let count = 0
  let positional = true
  for (const key in attributes) {
    if (!key.startsWith(PARAMETER)) continue
    const name = key.slice(PARAMETER.length);
    (named ??= {})[name] = attributes[key]
    count++
    if (!INDEX.test(name)) positional = false
  }
  if (named === undefined || !positional) return named
  const list: unknown[] = []
  for (let index = 0; index < count; index++) {
    if (!(String(index) in named)) return named
    list.push(named[index])
  }
  return list
}

function errorOf (span: ReadableSpan): string {
  if (span.status.message !== undefined && span.status.message !== '') return span.status.message
  const recorded = span.events.find((event) => event.name === 'exception')?.attributes?.['exception.message']
  return typeof recorded === 'string' ? recorded : `${span.name} failed`
}
