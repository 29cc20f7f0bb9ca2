const kReported = Symbol('fastify-kernel.reported')

/**
 * Marks an exception whose fault was already logged where it happened (once per outage, say):
 * the exception logger does not log it again for each request that meets it.
 */
export function reported<E extends Error> (error: E): E {
  Object.defineProperty(error, kReported, { value: true })
  return error
}

export function isReported (error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { [kReported]?: boolean })[kReported] === true
}
