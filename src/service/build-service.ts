import type { FastifyInstance } from 'fastify'
import { createKernelApp } from '../../plugins/create-app.js'
import type { ServiceEnv } from '../config/env.js'
import { exampleRequestServices, registerExampleRoutes } from './example-app.js'

/** The standalone service: the kernel plugin with the example application, configured from env. */
export async function buildService (env: ServiceEnv, overrides: { logger?: boolean } = {}): Promise<FastifyInstance> {
  const logger = overrides.logger === false
    ? false
    : {
        level: env.LOG_LEVEL,
        // pretty in dev for people, JSON lines elsewhere for machines
        ...(env.APP_ENV === 'dev' ? { transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } } } : {})
      }
  const services = await exampleRequestServices(env)
  const app = await createKernelApp({
    kernel: {
      debug: env.APP_DEBUG,
      ...(env.APP_IDE === null ? {} : { fileLinkFormat: env.APP_IDE }),
      ...services.options,
      // the service keeps profiles on disk (under var/ by default); the plugin's default is memory
      profiler: {
        storage: env.PROFILER_STORAGE,
        directory: env.PROFILER_DIR,
        maxProfiles: env.PROFILER_MAX_PROFILES,
        maxAge: env.PROFILER_MAX_AGE,
        ...(env.PROFILER_ALLOWED_NETWORKS.length > 0 ? { allowedNetworks: env.PROFILER_ALLOWED_NETWORKS } : {})
      }
    },
    // a hop count is valid at run time (proxy-addr) though Fastify's types omit it
    fastify: { logger, trustProxy: env.TRUST_PROXY as boolean | string }
  })
  for (const note of services.notes) app.log[note.level](note.message)
  registerExampleRoutes(app)
  return app
}
