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
  const stack = outer.stack ?? ''
  const frames = stack.indexOf('\n    at ')
  cause.stack = (cause.message === '' ? cause.name : `${cause.name}: ${cause.message}`) + (frames === -1 ? '' : stack.slice(frames))
  return cause
}
