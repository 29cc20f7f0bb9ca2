/**
 * The capture of each request's log calls (pino's `request.log`), noted as they are made and
 * formatted only when the profile is built (`collectors/logs.ts`).
 */
/** pino's levels, by name and number. */
const LEVELS: Array<[string, number]> = [['trace', 10], ['debug', 20], ['info', 30], ['warn', 40], ['error', 50], ['fatal', 60]]
export const LEVEL_NAMES = new Map(LEVELS.map(([name, level]) => [level, name]))
const MAX_RECORDS = 500

/** A log call as it was made; formatted only when the profile is built, after the response. */
export interface RawLogCall {
  level: number
  offset: number
  args: unknown[]
}

export interface CapturedLogs {
  calls: RawLogCall[]
  dropped: number
  /** the unit ended: calls still made (Fastify's `request completed`) are settled as they come */
  settled?: true
  /** performance.now() origin the offsets count from */
  origin: number
}

/**
 * What is kept of a value logged under `key` once the unit ended: a Fastify request or reply
 * (Fastify's own `incoming request` and `request completed` lines log them) as its serializers
 * would print it, never the object itself, which holds its socket; anything else as it is.
 */
export function settledLogValue (key: string, value: unknown): unknown {
  if (typeof value === 'object' && value !== null && 'raw' in value) {
    if (key === 'req' || key === 'request') {
      const r = value as { method?: string, url?: string }
      return { method: r.method, url: r.url }
    }
    if (key === 'res' || key === 'reply') return { statusCode: (value as { statusCode?: number }).statusCode }
  }
  // a formatted stack holds no frame (their functions and receivers) any more
  if (value instanceof Error && typeof value.stack === 'string') return value
  return value
}

/**
 * Once the unit ended, its log calls keep no live object: a logged request or reply becomes
 * what the logs panel shows of it (its formatting waits for the profile to be read).
 */
export function settleLogCalls (captured: CapturedLogs | undefined): void {
  if (captured === undefined) return
  captured.settled = true
  for (const call of captured.calls) settleCall(call)
}

function settleCall (call: RawLogCall): void {
  const first = call.args[0]
  if (typeof first !== 'object' || first === null || first instanceof Error) return
  let settled: Record<string, unknown> | undefined
  for (const key in first) {
    const value = (first as Record<string, unknown>)[key]
    const kept = settledLogValue(key, value)
    if (kept !== value) (settled ??= { ...first })[key] = kept
  }
  if (settled !== undefined) call.args[0] = settled
}

// Fastify's FastifyChildLoggerFactory, without tying this module to Fastify's generics
type ChildLoggerFactory = (this: any, logger: any, bindings: any, options: any, rawRequest: any) => any

const kCaptured = Symbol('fastify-kernel.captured-logs')
const kOriginal = Symbol('fastify-kernel.original-logger')

/**
 * The level methods of a capturing logger, made once: each notes the call in the request's
 * record list and calls the real method. Shared, so a request costs no closures; `this` is the
 * capturing logger or one of its children, which inherit both symbols.
 */
const CAPTURING_METHODS: Array<[string, (this: any, ...args: unknown[]) => unknown]> = LEVELS.map(([name, level]) => [name, function (this: any, ...args: unknown[]) {
  noteLogCall(this[kCaptured] as CapturedLogs, level, args)
  return this[kOriginal][name].apply(this, args)
}])

/** Notes one log call (bounded: beyond the bound, calls are counted). */
export function noteLogCall (captured: CapturedLogs, level: number, args: unknown[]): void {
  if (captured.calls.length >= MAX_RECORDS) {
    captured.dropped++
    return
  }
  const call = { level, offset: performance.now() - captured.origin, args }
  captured.calls.push(call)
  if (captured.settled === true) settleCall(call)
}

/** An empty capture whose offsets count from `origin` (performance.now()). */
export function newCapture (origin: number): CapturedLogs {
  return { calls: [], dropped: 0, origin }
}

/**
 * Captures each request's log calls for the profiler. Fastify creates `request.log` before any
 * hook runs, through its child logger factory: this factory asks the previous one for the
 * child, as before, and gives back an object inheriting from it whose level methods note the
 * call and then call the real method. What the app's logger prints does not change; children
 * of `request.log` inherit the capture. The records hang on that logger (a symbol, not a
 * WeakMap: thousands of live weak entries make every garbage collection slower).
 */
export class LogCapture {
  /** @param capturing whether a request made now may be profiled (the profiler is not saturated; its raw target not excluded) */
  factory (previous: ChildLoggerFactory, capturing: (url: string | undefined) => boolean = () => true): ChildLoggerFactory {
    return function profiledChildLogger (this: any, logger, bindings, options, rawRequest) {
      const child = previous.call(this, logger, bindings, options, rawRequest)
      if (!capturing(rawRequest?.url)) return child
      const captured = newCapture(performance.now())
      const capturer = Object.create(child)
      capturer[kCaptured] = captured
      capturer[kOriginal] = child
      for (const [name, method] of CAPTURING_METHODS) capturer[name] = method
      return capturer
    }
  }

  /**
   * The calls captured for a request, read from its logger (`request.log`, what the factory
   * made): nothing is written on Node's request object, whose shape V8 optimises for.
   */
  take (requestLog: object): CapturedLogs | undefined {
    return (requestLog as { [kCaptured]?: CapturedLogs })[kCaptured]
  }
}
