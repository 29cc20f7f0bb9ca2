import type { FastifyInstance } from 'fastify'
import type { Kernel } from '../src/kernel/kernel.js'
import type { ResolvedKernelOptions } from '../src/config/options.js'
import { KernelError } from '../src/errors/kernel-errors.js'

/** The web profiler: not built yet (issue 3). Refuses its options rather than ignore them. */
export async function registerProfiler (_app: FastifyInstance, _kernel: Kernel, options: ResolvedKernelOptions): Promise<void> {
  if (options.profiler !== undefined && options.profiler !== false) {
    throw new KernelError('KERNEL_INVALID_OPTIONS', 'fastify-kernel: the profiler is not available yet.')
  }
}
