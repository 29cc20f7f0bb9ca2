import { createRequire } from 'node:module'
import type { Redactor } from '../http/redact.js'
import { REDACTED } from '../http/redact.js'

type Serializer = (value: unknown) => unknown

const kRedacting = Symbol('fastify-kernel.redacting-serializer')

/**
 * pino's symbol for a logger's serializers (`pino.symbols`, pino's API for integrations), from
 * the pino Fastify itself loads: another copy of pino would have symbols of its own.
 */
function serializersSymbol (): symbol | undefined {
  try {
    const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'))
    return (fromFastify('pino') as { symbols?: { serializersSym?: symbol } }).symbols?.serializersSym
  } catch {
    return undefined
  }
}

/** A serializer's output with the URL's secret query values and secret headers masked. */
function redactRequestSummary (summary: unknown, redactor: Redactor): unknown {
  // only a plain summary is copied: a serializer that returns the request itself is left alone
  if (typeof summary !== 'object' || summary === null || ![Object.prototype, null].includes(Object.getPrototypeOf(summary))) return summary
  const fields = summary as Record<string, unknown>
  const out: Record<string, unknown> = { ...fields }
  if (typeof fields.url === 'string') out.url = redactor.url(fields.url)
  if (typeof fields.headers === 'object' && fields.headers !== null) {
    out.headers = Object.fromEntries(Object.entries(fields.headers).map(([name, value]) => [name, redactor.isSecret(name) ? REDACTED : value]))
  }
  return out
}

/**
 * Makes the app's request log lines (`incoming request`, and any `{ req }` logged) follow the
 * kernel's redaction policy: `url: "/login?password=******"`, secret headers masked when the
 * app's own `req` serializer logs headers. The `req` serializer of the app's root pino logger
 * is wrapped in place, once: every request's child logger shares it (Fastify makes them without
 * serializers of their own), whenever its route was added (before the kernel too) and whatever
 * child logger factory made it (the profiler's capture included), at no cost per request.
 * A route's own `logSerializers.req` replaces it, as it replaces Fastify's; a logger that is
 * not pino (or `logger: false`) has nothing to wrap.
 */
export function redactRequestLogs (log: object, redactor: () => Redactor): void {
  const symbol = serializersSymbol()
  const serializers = symbol === undefined ? undefined : (log as Record<symbol, Record<string, Serializer> | undefined>)[symbol]
  const original = serializers?.req
  if (serializers === undefined || typeof original !== 'function' || (original as { [kRedacting]?: true })[kRedacting] === true) return
  const redacting = Object.assign(function redactedRequest (request: unknown): unknown {
    return redactRequestSummary(original(request), redactor())
  }, { [kRedacting]: true as const })
  serializers.req = redacting
}
