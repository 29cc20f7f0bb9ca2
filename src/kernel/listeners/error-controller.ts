import type { FastifyRequest } from 'fastify'
import type { ExceptionEvent } from '../events.js'
import { Priority, Stage } from '../stages.js'
import { subscription } from '../dispatcher.js'
import type { KernelResponse } from '../../http/response.js'
import type { KernelContext } from '../context.js'
import type { ErrorPageFormat, ErrorPageInput, JsonErrors, RequestSummary } from '../../errors/error-controller.js'
import { planErrorResponse } from '../../errors/error-controller.js'
import { flattenChain, headersOf } from '../../errors/flatten.js'
import { acceptsProblemJson, imposedErrorFormat, preferredErrorFormat } from '../../http/negotiate.js'
import type { ErrorFormat } from '../../http/negotiate.js'
import { headerText } from '../../http/encoding.js'
import { REDACTED } from '../../http/redact.js'
import type { Redactor } from '../../http/redact.js'
import type { SourceExcerpts } from '../../errors/source-excerpt.js'
import { responseNonces } from './csp-nonces.js'

/** Renders an error page; synchronously when it can (the kernel's compiled templates), so the answer needs no promise. */
export type TemplateRenderer = (template: string, model: Record<string, unknown>) => string | Promise<string>

/** Adds to what a debug error page shows (the profiler adds its token and the nearest routes). */
export type ErrorPageExtension = (event: ExceptionEvent) => Partial<Pick<ErrorPageInput, 'profile' | 'hints'>> | undefined

/** What the debug page shows of the request, masked by the same policy as the profiler's. */
export function summarizeRequest (request: FastifyRequest, context: KernelContext, redactor: Redactor): RequestSummary {
  const url = context.requestUrl(request.url)
  const headers: RequestSummary['headers'] = []
  // a request made up by a plugin (@fastify/websocket's injectWS) may have no raw header list
  const raw = request.raw.rawHeaders ?? []
  for (let i = 0; i + 1 < raw.length; i += 2) {
    headers.push({ name: raw[i], value: redactor.isSecret(raw[i]) ? REDACTED : headerText(raw[i + 1]) ?? '' })
  }
  const attributes = Object.entries(context.attributes)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => ({ name, value: typeof value === 'string' ? value : JSON.stringify(redactor.value(value)) ?? String(value) }))
  return { method: request.method, url: redactor.url(url), headers, attributes }
}

/** The plain-text answer used when a template itself fails: never a stack, never a path. */
export function lastResortResponse (statusCode: number, statusText: string): KernelResponse {
  return { statusCode, headers: {}, contentType: 'text/plain; charset=utf-8', body: `${statusCode} ${statusText}` }
}

export interface ErrorControllerOptions {
  debug: boolean
  render: TemplateRenderer
  /** what other features add to debug pages */
  extensions: () => readonly ErrorPageExtension[]
  /** the redaction policy of debug pages (the profiler's, when it is on) */
  redactor: () => Redactor
  /** debug: source maps, excerpts and editor links of stack frames */
  sources?: SourceExcerpts
  /** the format the app imposes on a path's errors (the `format` option) */
  formatOfPath?: (path: string) => ErrorPageFormat | undefined
  /** the body of JSON errors (the `jsonErrors` option) */
  jsonErrors?: JsonErrors
  /** Fastify's shape: every error keeps its own message, as bare Fastify's, a production 5xx's included (the `exposeServerErrors` option) */
  exposeServerErrors?: boolean
}

/**
 * The format of an error response: the one the route imposes (its `config.format`, recorded as
 * `_format` by the router listener, as Symfony's route default), else the app's for the path,
 * else what `Accept` asks for. A problem-details body goes as `application/problem+json`
 * (RFC 9457) to a client that accepts it as much as `application/json`.
 */
function errorFormatOf (event: ExceptionEvent, formatOfPath: ErrorControllerOptions['formatOfPath'], jsonErrors: JsonErrors): ErrorFormat {
  const accept = event.request.headers.accept
  const accepted = preferredErrorFormat(accept)
  const routeFormat = event.context.attributes._format
  const imposed = routeFormat === 'json' || routeFormat === 'html'
    ? routeFormat
    : formatOfPath?.(event.context.uri?.path ?? event.request.url.split('?', 1)[0])
  const format = imposedErrorFormat(accepted, imposed)
  return format === 'json' && jsonErrors === 'problem' && acceptsProblemJson(accept) ? 'problem' : format
}

/**
 * The error controller as the last kernel.exception listener (priority -128): it answers
 * every exception no earlier listener answered, in the format the client accepts.
 */
export function createErrorController ({ debug, render, extensions, redactor, sources, formatOfPath, jsonErrors = 'problem', exposeServerErrors = false }: ErrorControllerOptions) {
  // a production answer depends on its format and status alone (and the exception's own
  // headers, such as Allow): made once, then answered synchronously without planning it again
  const productionAnswers = new Map<string, { contentType: string, body: string }>()

  return function errorController (event: ExceptionEvent): void | Promise<void> {
    const format = errorFormatOf(event, formatOfPath, jsonErrors)
    // a body that depends on more than the format, status and code is planned each time:
    // Fastify's shape (its message), and a body another plugin built
    const cacheable = !debug && event.error instanceof Error && (format !== 'json' || jsonErrors === 'problem')
    const code = cacheable && format !== 'html' ? (event.error as { code?: unknown }).code : undefined
    const statusCode = event.statusCode
    const key = cacheable ? `${format}:${statusCode}:${typeof code === 'string' ? code : ''}` : ''
    const made = cacheable ? productionAnswers.get(key) : undefined
    if (made !== undefined) {
      const headers = headersOf(event.error)
      headers.Vary = 'Accept'
      event.setResponse({ statusCode, headers, contentType: made.contentType, body: made.body })
      return
    }
    const input: ErrorPageInput = {
      error: event.error,
      debug,
      format,
      jsonErrors,
      exposeServerErrors,
      replyStatus: event.context.replyStatus,
      // only debug pages show the request
      request: debug ? summarizeRequest(event.request, event.context, redactor()) : { method: event.request.method, url: '', headers: [], attributes: [] }
    }
    if (debug) {
      for (const extend of extensions()) Object.assign(input, extend(event))
      // a message may quote a URL with its credentials (a DSN, undici's errors): masked as every URL is
      const masking = redactor()
      input.chain = (sources !== undefined ? sources.chain(event.error) : flattenChain(event.error, true)).map((exception) => ({ ...exception, message: masking.message(exception.message) }))
      if (format === 'html') input.styleNonce = responseNonces(event.context, event.reply).style
    }
    const plan = planErrorResponse(input)
    const answer = (body: string): void => {
      if (cacheable && productionAnswers.size < 100) productionAnswers.set(key, { contentType: plan.contentType, body })
      event.setResponse({ statusCode: plan.statusCode, headers: plan.headers, contentType: plan.contentType, body })
    }
    if (plan.template === undefined) return answer(plan.body ?? '')
    const failed = (error: unknown): void => {
      event.request.log.error({ err: error }, 'fastify-kernel: rendering the error page failed')
      event.setResponse(lastResortResponse(plan.statusCode, String(plan.model?.statusText ?? 'Error')))
    }
    let rendered: string | Promise<string>
    try {
      rendered = render(plan.template, plan.model ?? {})
    } catch (error) {
      return failed(error)
    }
    return typeof rendered === 'string' ? answer(rendered) : rendered.then(answer, failed)
  }
}

/** The error controller as the last kernel.exception listener. */
export function errorControllerSubscriptions (errorController: (event: ExceptionEvent) => void | Promise<void>) {
  return [subscription(Stage.EXCEPTION, Priority.ERROR_CONTROLLER, 'error controller', errorController)]
}
