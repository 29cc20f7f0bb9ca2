import { kernelClasses } from '../errors/class-names.js'

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

kernelClasses(AuthenticationException, BadCredentialsException, InsufficientAuthenticationException, AccessDeniedException)
