/** A setting of the service (environment, `.env`) that it cannot start with. */
export class ServiceConfigError extends Error {
  readonly code = 'SERVICE_INVALID_ENV'

  constructor (message: string, options?: { cause?: unknown }) {
    super(`fastify-kernel service: invalid environment: ${message}`, options)
    this.name = 'ServiceConfigError'
  }
}

/** Something the service needs at start is not there (Redis unreachable): said plainly, no stack. */
export class ServiceStartError extends Error {
  readonly code = 'SERVICE_START_FAILED'

  constructor (message: string, options?: { cause?: unknown }) {
    super(`fastify-kernel service: ${message}`, options)
    this.name = 'ServiceStartError'
  }
}
