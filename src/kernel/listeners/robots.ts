import type { ResponseEvent } from '../events.js'

/** Symfony's DisallowRobotsIndexingListener: the last kernel.response listener. */
export function disallowRobotsIndexing (event: ResponseEvent): void {
  if (!event.reply.hasHeader('x-robots-tag')) event.reply.header('X-Robots-Tag', 'noindex')
}
