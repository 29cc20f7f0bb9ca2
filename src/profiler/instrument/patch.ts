/**
 * Wraps `target[name]` (a prototype's method) with what `wrap` makes of the original, and
 * returns what undoes it. Undoing puts the original back exactly (an own property as it was, an
 * inherited one by deleting the wrapper); when something else has wrapped the method since
 * (another instrumentation, shimmer-style, holding a reference to this wrapper), the wrapper is
 * left in place but made inert: from then on it only calls the original.
 */
export function wrapMethod<F extends (...args: never[]) => unknown> (target: object, name: string, wrap: (original: F) => F): () => void {
  const holder = target as Record<string, unknown>
  const original = holder[name] as F
  const own = Object.prototype.hasOwnProperty.call(target, name)
  const wrapped = wrap(original)
  let active = true
  const wrapper = function (this: unknown, ...args: unknown[]): unknown {
    return (active ? wrapped : original).apply(this, args as never)
  }
  Object.defineProperty(wrapper, 'name', { value: original.name })
  Object.defineProperty(wrapper, 'length', { value: original.length })
  if (own) holder[name] = wrapper
  else Object.defineProperty(target, name, { value: wrapper, writable: true, configurable: true, enumerable: false })
  return () => {
    active = false
    if (holder[name] !== wrapper) return
    if (own) holder[name] = original
    else delete holder[name]
  }
}
