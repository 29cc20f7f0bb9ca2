import { flattenChain } from '../../errors/flatten.js'
import type { FlatException } from '../../errors/flatten.js'
import { truncate } from '../redact.js'

/** The exception collector: the whole chain, outermost first, with classes, messages and traces. */
export function collectException (error: unknown): FlatException[] | null {
  if (error === undefined || error === null) return null
  return flattenChain(error, true).map((exception) => ({ ...exception, message: truncate(exception.message, 16384), trace: exception.trace.slice(0, 100) }))
}
