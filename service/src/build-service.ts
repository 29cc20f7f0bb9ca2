import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import { createKernelApp } from 'fastify-kernel'
import type { ServiceEnv } from './env.js'
import { exampleRequestServices, registerExampleRoutes } from './example-app.js'

/**
 * `TRUST_PROXY=2` means two proxies in front of the service, as Express counts hops. Fastify 5
 * refuses a bare number (it trusts nothing for it), so the count becomes proxy-addr's function
 * form: the nearest `hops` addresses are proxies, whoever they are.
 */
export function fastifyTrustProxy (value: ServiceEnv['TRUST_PROXY']): FastifyServerOptions['trustProxy'] {
  if (typeof value !== 'number') return value
  return (_address: string, hop: number) => hop < value
}

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
      trustedHosts: env.APP_TRUSTED_HOSTS,
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
    fastify: { logger, trustProxy: fastifyTrustProxy(env.TRUST_PROXY) }
  })
  for (const note of services.notes) app.log[note.level](note.message)
  registerExampleRoutes(app)
  return app
}
