import type { Collector } from '../../../kernel/collector.js'
import type { FlatException } from '../../../errors/flatten.js'
import type { SourceExcerpts } from '../../../errors/source-excerpt.js'
import { flattenChain, withReplyStatus } from '../../../errors/flatten.js'
import { traceView } from '../../../errors/trace-view.js'
import { truncate } from '../../../http/redact.js'
import { PROFILER_PATH } from '../../recording.js'

declare module '../../../kernel/collector.js' {
  interface CollectedData {
    /** the chain, outermost first; empty when the unit threw nothing */
    exception: FlatException[]
  }
}

/** Frames kept in a profile; an excerpt is only kept on the frames it was made for. */
const MAX_FRAMES = 100

/**
 * The exception panel: the whole chain, outermost first, with classes, messages and traces, as
 * the debug page showed it (source excerpts and editor links included); and the toolbar's
 * exception item. Every profile has the panel ("No exception was thrown…").
 */
export function exceptionCollector (sources: SourceExcerpts | undefined): Collector<FlatException[]> {
  return {
    name: 'exception',
    kinds: 'all',
    label: 'Exception',
    order: 20,
    deferred: true,
    template: 'profiler/collectors/exception.hbs',
    masked: true,
    schema: {
      type: 'array',
      items: { type: 'object', required: ['class', 'message', 'statusCode', 'trace'], properties: { class: { type: 'string' }, message: { type: 'string' }, statusCode: { type: 'integer' }, trace: { type: 'array', items: { type: 'object' } } } }
    },
    collect ({ context, redactor }) {
      const error = context.exception
      if (error === undefined || error === null) return []
      const chain = withReplyStatus(sources === undefined ? flattenChain(error, true) : sources.chain(error), context.replyStatus)
      // a message may quote a URL with its credentials (a DSN, undici's errors)
      return chain.map((exception) => ({ ...exception, message: truncate(redactor.message(exception.message), 16384), trace: exception.trace.slice(0, MAX_FRAMES) }))
    },
    preferred (chain) {
      return chain.length > 0
    },
    panel (chain, profile) {
      // a job or a command answers no HTTP status: its outcome is said instead
      const unit = profile.kind !== undefined && profile.kind !== 'request' ? profile.kind : undefined
      return {
        none: chain.length === 0,
        unit,
        chain: chain.map((exception, index) => ({
          ...exception,
          position: index + 1,
          isCause: index > 0,
          causeOf: index > 0 ? chain[index - 1].class : null,
          outcome: unit !== undefined && index === 0 ? `the ${unit} failed` : undefined,
          // the response's status, or a cause's own; a cause without one (a unit's error without one) has no status to show
          showStatus: (index === 0 && unit === undefined) || exception.isHttp === true,
          ...traceView(exception.trace)
        }))
      }
    },
    badge (chain) {
      return chain.length > 0 ? { text: String(chain.length), kind: 'error' } : undefined
    },
    toolbar (chain, profile) {
      const outer = chain?.[0]
      return outer === undefined ? undefined : { class: outer.class, message: outer.message, count: chain!.length, link: `${PROFILER_PATH}/${profile.token}?panel=exception` }
    }
  }
}
