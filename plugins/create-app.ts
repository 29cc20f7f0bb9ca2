import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import type { KernelOptions } from './kernel-options.js'
import { kernel } from './kernel.js'
import { kernelServerOptions } from './server-options.js'

/** `kernelServerOptions()` with `given` over them (router and http options merged one level deeper). */
export function withKernelServerOptions (given: FastifyServerOptions = {}): FastifyServerOptions {
  const defaults = kernelServerOptions()
  return {
    ...defaults,
    ...given,
    routerOptions: { ...defaults.routerOptions, ...(given.routerOptions ?? {}) },
    http: { ...defaults.http, ...((given as { http?: object }).http ?? {}) }
  } as FastifyServerOptions
}

/**
 * A Fastify app with the kernel's server options and the kernel registered (and awaited), so
 * routes can be added at once. Options given in `fastify` win over the kernel's defaults.
 */
export async function createKernelApp (options: { kernel?: KernelOptions, fastify?: FastifyServerOptions } = {}): Promise<FastifyInstance> {
  // loaded here, not with the package: an app that builds its own instance never needs it from us
  const { default: Fastify } = await import('fastify')
  const app = Fastify(withKernelServerOptions(options.fastify))
  await app.register(kernel, options.kernel ?? {})
  return app
}
