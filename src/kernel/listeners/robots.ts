import { Priority, Stage } from '../stages.js'
import { subscription } from '../dispatcher.js'

/** Symfony's DisallowRobotsIndexingListener: the last kernel.response listener. */
export const robotsSubscriptions = [subscription(Stage.RESPONSE, Priority.ROBOTS, 'disallow robots indexing', function disallowRobotsIndexing (event) {
  if (!event.reply.hasHeader('x-robots-tag')) event.reply.header('X-Robots-Tag', 'noindex')
})]
