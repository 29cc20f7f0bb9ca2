import type { ExceptionEvent } from '../kernel/events.js'
import { Priority, Stage } from '../kernel/stages.js'
import { subscription } from '../kernel/dispatcher.js'
import { AccessDeniedHttpException, ServiceUnavailableHttpException, AccessDeniedException, AuthenticationException } from '../errors/exceptions.js'
import { securityOf } from './firewall-listener.js'
import { redirectOrigin, startAuthentication } from './entry-points.js'
import { sessionOf, targetPathKey } from './session-token.js'
import { invalidCsrfToken, isCsrfRefusal } from './csrf.js'

/**
 * Symfony's security ExceptionListener (kernel.exception, priority 1, before the logger and
 * the error controller):
 * - an anonymous request denied access, or any authentication failure: the firewall's entry
 *   point answers (401 with `WWW-Authenticate` and an empty body, or a redirect to the login form);
 * - an authenticated user denied access: the error becomes AccessDeniedHttpException
 *   (403 `Access Denied.`, the security exception as its cause) for the error controller;
 * - a CSRF token refused by @fastify/csrf-protection: 403 `Invalid CSRF token.` likewise.
 *
 * The redirect to the login form is absolute only with `hostsVetted` (see `redirectOrigin`).
 */
export function securityExceptionSubscriptions (hostsVetted: boolean) {
  return [subscription(Stage.EXCEPTION, Priority.SECURITY_EXCEPTION, 'security exceptions', (event: ExceptionEvent) => { securityExceptions(event, hostsVetted) })]
}

function securityExceptions (event: ExceptionEvent, hostsVetted: boolean): void {
  const error = event.error
  if (isCsrfRefusal(error)) {
    // the token's secret is in a session the store could not read: a 503, not the client's fault
    event.error = event.context.get('session')?.unavailable === true
      ? new ServiceUnavailableHttpException('The session store is unavailable: the request cannot be verified. Try again.', error)
      : invalidCsrfToken(error)
    event.context.exception = event.error
    return
  }
  const isDenied = error instanceof AccessDeniedException
  if (!isDenied && !(error instanceof AuthenticationException)) return
  const state = securityOf(event.context)
  if (isDenied && state !== null && state.user !== null) {
    event.error = new AccessDeniedHttpException(error.message, error)
    event.context.exception = event.error
    return
  }
  // outside every firewall there is no way to log in: the error page tells the status
  const uri = event.context.uri
  if (state === null || state.firewall === null || uri === undefined) return
  const firewall = state.firewall
  const answer = startAuthentication(firewall, redirectOrigin(event.context, hostsVetted))
  if (answer === null) return
  if (firewall.entryPoint === 'formLogin' && event.request.method === 'GET') {
    // back to this page after logging in (Symfony's target path): this uses the session
    sessionOf(event.request)?.set(targetPathKey(firewall.name), uri.path + (uri.query === '' ? '' : '?' + uri.query))
  }
  state.decision = 'unauthenticated'
  state.reason ??= error.message
  event.setResponse(answer)
}
