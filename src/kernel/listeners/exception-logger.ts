import type { ExceptionEvent } from '../events.js'
import { Priority, Stage } from '../stages.js'
import { subscription } from '../dispatcher.js'
import { isReported } from '../../errors/reported.js'

/**
 * Logs every exception once: server errors as errors, client errors as information, and one
 * whose fault was already logged where it happened (`reported`) at debug level only.
 */
export function logException (event: ExceptionEvent): void {
  const status = event.statusCode
  const message = event.error instanceof Error ? event.error.message : String(event.error)
  if (isReported(event.error)) event.request.log.debug({ statusCode: status }, message)
  else if (status >= 500) event.request.log.error({ err: event.error }, `Uncaught exception: ${message}`)
  else event.request.log.info({ statusCode: status }, message)
}

export const exceptionLoggerSubscriptions = [subscription(Stage.EXCEPTION, Priority.EXCEPTION_LOGGER, 'exception logger', logException)]
