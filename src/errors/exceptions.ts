import { kernelClasses } from './class-names.js'

/**
 * The exceptions requests meet, named as Symfony's: those that carry an HTTP status and headers
 * (HttpException and its kin), the matcher's, and the security layer's. Routing failures and
 * request errors are raised as these; the error controller renders them. (The kernel's own
 * errors, with codes, are in `codes.ts`.)
 */
export class HttpException extends Error {
  readonly headers: Record<string, string>

  constructor (readonly statusCode: number, message = '', options: { cause?: unknown, headers?: Record<string, string> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    this.headers = options.headers ?? {}
  }
}

export class BadRequestHttpException extends HttpException {
  constructor (message = '', cause?: unknown) { super(400, message, { cause }) }
}

export class UnauthorizedHttpException extends HttpException {
  constructor (challenge: string, message = '', cause?: unknown) {
    super(401, message, { cause, headers: { 'WWW-Authenticate': challenge } })
  }
}

export class AccessDeniedHttpException extends HttpException {
  constructor (message = 'Access Denied.', cause?: unknown) { super(403, message, { cause }) }
}

export class NotFoundHttpException extends HttpException {
  constructor (message = '', cause?: unknown) { super(404, message, { cause }) }
}

export class MethodNotAllowedHttpException extends HttpException {
  constructor (readonly allowedMethods: string[], message = '', cause?: unknown) {
    super(405, message, { cause, headers: { Allow: allowedMethods.join(', ') } })
  }
}

export class RequestTimeoutHttpException extends HttpException {
  constructor (message = '', cause?: unknown) { super(408, message, { cause }) }
}

/** 429 with `Retry-After` (seconds), as Symfony's TooManyRequestsHttpException. */
export class TooManyRequestsHttpException extends HttpException {
  constructor (readonly retryAfter: number, message = '', cause?: unknown) {
    super(429, message, { cause, headers: { 'Retry-After': String(retryAfter) } })
  }
}

/** 503 with `Retry-After` (seconds, default 5): the answer is worth asking again soon. */
export class ServiceUnavailableHttpException extends HttpException {
  constructor (message = '', cause?: unknown, retryAfterSeconds = 5) { super(503, message, { cause, headers: { 'Retry-After': String(retryAfterSeconds) } }) }
}

export class UriTooLongHttpException extends HttpException {
  constructor (message = '', cause?: unknown) { super(414, message, { cause }) }
}

/** The matcher's own failures: the causes of the HTTP exceptions above. */
export class ResourceNotFoundException extends Error {
  constructor (message: string) { super(message); this.name = 'ResourceNotFoundException' }
}

export class MethodNotAllowedException extends Error {
  constructor (readonly allowedMethods: string[]) { super(''); this.name = 'MethodNotAllowedException' }
}

/** A request whose Host header is not a host name; Symfony's SuspiciousOperationException. */
export class SuspiciousOperationException extends Error {
  constructor (message: string) { super(message); this.name = 'SuspiciousOperationException' }
}

kernelClasses(
  HttpException, BadRequestHttpException, UnauthorizedHttpException, AccessDeniedHttpException, NotFoundHttpException,
  MethodNotAllowedHttpException, RequestTimeoutHttpException, ServiceUnavailableHttpException, UriTooLongHttpException,
  ResourceNotFoundException, MethodNotAllowedException, SuspiciousOperationException
)

/**
 * The security layer's own failures, named as Symfony's. They carry an HTTP status so that
 * they render sensibly even where no security exception listener turns them into answers
 * (an `isGranted` route in an app without firewalls).
 */
export class AuthenticationException extends Error {
  readonly statusCode: number = 401
  constructor (message = 'An authentication exception occurred.', cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause })
    this.name = new.target.name
  }
}

/** Credentials were given but are wrong or malformed; the message never says which. */
export class BadCredentialsException extends AuthenticationException {
  constructor (message = 'Invalid credentials.', cause?: unknown) { super(message, cause) }
}

/**
 * Too many failed logins from this client (and for this user name) within the throttling
 * interval; Symfony's message. `retryAfter`: seconds until an attempt is accepted again.
 */
export class TooManyLoginAttemptsAuthenticationException extends AuthenticationException {
  constructor (readonly retryAfter: number) {
    const minutes = Math.max(1, Math.ceil(retryAfter / 60))
    super(`Too many failed login attempts, please try again in ${minutes} minute${minutes > 1 ? 's' : ''}.`)
  }
}

/** A form login or logout without a valid CSRF token; Symfony's message. */
export class InvalidCsrfTokenException extends AuthenticationException {
  constructor (message = 'Invalid CSRF token.', cause?: unknown) { super(message, cause) }
}

/** An anonymous request reached something that needs a user. */
export class InsufficientAuthenticationException extends AuthenticationException {
  constructor (message = 'Full authentication is required to access this resource.', cause?: unknown) { super(message, cause) }
}

/** The user (or the anonymous visitor) lacks what an access rule or a route check requires. */
export class AccessDeniedException extends Error {
  readonly statusCode: number = 403
  constructor (message = 'Access Denied.', readonly attributes: readonly string[] = [], cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause })
    this.name = 'AccessDeniedException'
  }
}

kernelClasses(AuthenticationException, BadCredentialsException, TooManyLoginAttemptsAuthenticationException, InvalidCsrfTokenException, InsufficientAuthenticationException, AccessDeniedException)
