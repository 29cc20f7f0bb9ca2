import type { FastifyInstance } from 'fastify'
import { loadServiceEnv } from './env.js'
import { buildService } from './build-service.js'

/**
 * The example service for the routing console, configured from the environment and `.env` as
 * `npm start` is, without logs and with the profiler's memory storage (the console writes no
 * files): `npx fastify-kernel routes service/dist/app.js`.
 */
export async function build (): Promise<FastifyInstance> {
  return await buildService(loadServiceEnv({ ...process.env, PROFILER_STORAGE: 'memory' }), { logger: false })
}
