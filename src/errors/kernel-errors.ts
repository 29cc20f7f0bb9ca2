import { kernelClasses } from './class-names.js'

/**
 * Errors of the kernel itself: wrong options, wrong registration order, wrong use of the API.
 * Each carries a stable code, as Fastify's own errors do.
 */
export type KernelErrorCode =
  | 'KERNEL_INVALID_OPTIONS'
  | 'KERNEL_UNKNOWN_STAGE'
  | 'KERNEL_INVALID_LISTENER'
  | 'KERNEL_LATE_LISTENER'
  | 'KERNEL_REDIS_UNAVAILABLE'
  | 'KERNEL_INVALID_COLLECTOR'

export class KernelError extends Error {
  constructor (readonly code: KernelErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'KernelError'
  }
}

kernelClasses(KernelError)
