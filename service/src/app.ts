import type { FastifyInstance } from 'fastify'
import { loadServiceEnv } from './env.js'
import { buildService } from './build-service.js'

/**
 * The example service for the console, configured from the environment and `.env` as
 * `npm start` is, without logs: `npx fastify-kernel routes service/dist/app.js`. The console
 * opens the profiler's storage for reading only, so that `npx fastify-kernel profile
 * service/dist/app.js latest` reads what a running `npm start` stored (its file storage under
 * var/profiler, or Redis), and writes nothing.
 */
export async function build (): Promise<FastifyInstance> {
  return await buildService(loadServiceEnv(), { logger: false })
}
