import type { FlatException } from '../../errors/flatten.js'
import { truncate } from '../../http/redact.js'

/** Frames kept in a profile; an excerpt is only kept on the frames it was made for. */
const MAX_FRAMES = 100

/**
 * The exception collector: the whole chain, outermost first, with classes, messages and
 * traces, as the debug page showed it (source excerpts and editor links included).
 */
export function collectException (chain: FlatException[] | null): FlatException[] | null {
  if (chain === null) return null
  return chain.map((exception) => ({ ...exception, message: truncate(exception.message, 16384), trace: exception.trace.slice(0, MAX_FRAMES) }))
}
