/**
 * Exceptions made cheaply for the router's expected misses (no stack captured, or the wrapper's
 * frames shared with its cause).
 */
/**
 * An exception of `type` built without running Error's constructor, so that no stack is
 * captured: even at `Error.stackTraceLimit = 0` V8 spends about 0.3 µs on each Error, and a
 * production routing miss builds two, an expected outcome whose stack no page shows.
 * `instanceof`, `name`, `message`, `cause` and the HTTP fields are what the constructor would
 * set; `stack` is absent.
 */
export function stackless<T extends Error> (type: abstract new (...args: never[]) => T, fields: Omit<Partial<T>, 'stack' | 'name'> & { message: string }): T {
  return Object.assign(Object.create(type.prototype) as T, { name: type.name }, fields)
}

/**
 * A cause raised where its wrapper was (the router's miss: Symfony's matcher throws, its
 * RouterListener wraps): it shows the wrapper's frames, captured once, so that every exception
 * of a debug page's chain has its stack trace.
 */
export function withFramesOf<T extends Error> (cause: T, outer: Error): T {
  cause.stack = stackHeader(cause) + framesOf(outer.stack ?? '')
  return cause
}

/** The first line of an error's stack, as V8 writes it. */
function stackHeader (error: Error): string {
  return error.message === '' ? error.name : `${error.name}: ${error.message}`
}

/** The frame lines of a stack (from the first `\n    at `), or '' when it has none. */
function framesOf (stack: string): string {
  const frames = stack.indexOf('\n    at ')
  return frames === -1 ? '' : stack.slice(frames)
}

/** A place exceptions are raised at whose frames are the same every time: the frames, once captured. */
export interface RaiseSite { frames?: string }

/**
 * Before constructing an exception at `site` (the router's miss, whose stack is limited to the
 * one frame that raises it): once the site's frames are known, stack capture (most of the
 * exception's cost) is switched off for the construction. Returns the limit `sharedFrames`
 * restores. The construction stays in the caller, so that the first capture names its frame.
 */
export function skipCapture (site: RaiseSite): number | undefined {
  if (site.frames === undefined || Error.stackTraceLimit < 1) return undefined
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  return limit
}

/**
 * After constructing it: the first exception of the site gives its frames, every later one shows
 * them. With stack traces off (a limit of 0) nothing is captured or shown, as for any error.
 */
export function sharedFrames<T extends Error> (site: RaiseSite, error: T, limit: number | undefined): T {
  if (limit === undefined) {
    if (Error.stackTraceLimit >= 1) site.frames ??= framesOf(error.stack ?? '')
    return error
  }
  Error.stackTraceLimit = limit
  error.stack = stackHeader(error) + (site.frames ?? '')
  return error
}
