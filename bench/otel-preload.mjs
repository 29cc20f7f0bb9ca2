// The peer a user would pick instead of the profiler: OpenTelemetry's SDK with
// instrumentation-http and @fastify/otel, every span exported. Loaded with `--import` before the
// bench server (bench/server.mjs `otel`), as OpenTelemetry's docs set it up: the instrumentations
// enabled before fastify and node:http are loaded. Every span goes through a SimpleSpanProcessor
// (each one exported as it ends: a BatchSpanProcessor drops spans past its queue under load) into
// an in-memory exporter that keeps the last 10,000 (OpenTelemetry's own InMemorySpanExporter
// grows without bound). The spans exported are counted for the bench (bench/server.mjs).
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import { SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { registerInstrumentations } from '@opentelemetry/instrumentation'
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http'
import FastifyOtelInstrumentation from '@fastify/otel'

const KEPT = 10_000
const kept = new Array(KEPT)
let next = 0
globalThis.benchOtelExported = 0

/** A SpanExporter keeping the last KEPT spans in a ring. */
const exporter = {
  export (spans, resultCallback) {
    for (const span of spans) {
      kept[next] = span
      next = (next + 1) % KEPT
      globalThis.benchOtelExported++
    }
    resultCallback({ code: 0 })
  },
  async shutdown () {},
  async forceFlush () {}
}

const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
provider.register()
registerInstrumentations({
  tracerProvider: provider,
  instrumentations: [new HttpInstrumentation(), new FastifyOtelInstrumentation({ registerOnInitialization: true })]
})
