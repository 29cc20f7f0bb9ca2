import type { FastifyInstance } from 'fastify'
import type { Kernel } from '../src/kernel/kernel.js'
import type { ResolvedKernelOptions } from '../src/config/options.js'
import { KernelError } from '../src/errors/kernel-errors.js'

/** Session, locale and firewall listeners of kernel.request: not built yet (issue 4). */
export async function registerRequestServices (_app: FastifyInstance, _kernel: Kernel, options: ResolvedKernelOptions): Promise<void> {
  for (const feature of ['session', 'locale', 'security'] as const) {
    if (options[feature] !== undefined) throw new KernelError('KERNEL_INVALID_OPTIONS', `fastify-kernel: "${feature}" is not available yet.`)
  }
}
