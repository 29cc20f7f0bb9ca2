import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import type { Redis } from 'ioredis'
import { createPool } from 'mysql2/promise'
import { createKernelApp } from 'fastify-kernel'
import type { ServiceEnv } from './env.js'
import { exampleRequestServices, registerExampleRoutes } from './example-app.js'
import { connectRedis, IdleExpiryRedisStore, REDIS_COMMAND_TIMEOUT_MS } from './redis.js'
import { registerDemoPage } from './demo-page.js'

/**
 * The service's `connectionTimeout` (a socket with no traffic for this long is
 * closed). Not in the kernel's `kernelServerOptions()`: Node resets that socket timer on every read and
 * write, about 1 µs a request (8% of a small response), while the stalls it would catch are
 * already bounded: a request by `requestTimeout`, a body by the kernel's `bodyTimeout`, an idle
 * keep-alive connection by `keepAliveTimeout`.
 */
export const CONNECTION_TIMEOUT = 120_000

/** Idle seconds before a session expires: the Redis key's expiry, renewed by each read. */
const SESSION_TTL = 1800

/** Redis as `/_health` reports it. */
async function redisState (client: Redis | undefined): Promise<'not used' | 'ready' | 'down'> {
  if (client === undefined) return 'not used'
  try {
    // bounded by the client's own commandTimeout
    return await client.ping() === 'PONG' ? 'ready' : 'down'
  } catch {
    return 'down'
  }
}

/**
 * `GET /_health`: 200 while the process serves requests, with Redis' state. Redis down does not
 * make the process unhealthy (requests still get answers: anonymous, unprofiled), so a
 * container is not restarted for it; `?require=redis` answers 503 then, for a readiness check.
 */
function registerHealth (app: FastifyInstance, client: Redis | undefined): void {
  // the probe runs every few seconds: never profiled (it would crowd out the pages)
  app.get('/_health', { config: { name: '_health', profiler: false } }, async function health (request, reply) {
    const redis = await redisState(client)
    const required = (request.query as { require?: unknown }).require === 'redis'
    return reply.code(redis === 'down' && required ? 503 : 200).header('cache-control', 'no-store')
      .send({ status: redis === 'down' ? 'degraded' : 'ok', redis })
  })
}

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
  const profilerOnRedis = env.APP_DEBUG && env.PROFILER_STORAGE === 'redis'
  let app: FastifyInstance | undefined
  // connected first: a wrong URL or a server that is down is a clear error at start
  // sessions, profiles and login-throttling counters share it (the counters whenever it is set)
  const redis = env.REDIS_URL !== null
    ? await connectRedis(env.REDIS_URL, { warn: (fields, message) => { app === undefined ? console.warn(message) : app.log.warn(fields, message) } })
    : undefined
  try {
    app = await createKernelApp({
      kernel: {
        debug: env.APP_DEBUG,
        trustedHosts: env.APP_TRUSTED_HOSTS,
        ...(env.APP_IDE === null ? {} : { fileLinkFormat: env.APP_IDE }),
        ...services.options,
        ...(redis !== undefined && env.SESSION_STORE === 'redis' ? { session: { ...services.options.session, ttl: SESSION_TTL, store: new IdleExpiryRedisStore(redis, SESSION_TTL) } } : {}),
        ...(redis !== undefined ? { security: { ...services.options.security, loginThrottlingStore: { redis: { client: redis, commandTimeout: REDIS_COMMAND_TIMEOUT_MS } } } } : {}),
        // profiles in the kernel's default, the file storage under var/profiler of the app's root
        // (every process of the app shares it), or where PROFILER_STORAGE and PROFILER_DIR say
        profiler: {
          ...(redis !== undefined && profilerOnRedis ? { storage: 'redis', redis: { client: redis, commandTimeout: REDIS_COMMAND_TIMEOUT_MS } } : env.PROFILER_STORAGE === 'file' ? {} : { storage: 'memory' }),
          ...(env.PROFILER_DIR === null ? {} : { directory: env.PROFILER_DIR }),
          maxProfiles: env.PROFILER_MAX_PROFILES,
          maxAge: env.PROFILER_MAX_AGE,
          ...(env.PROFILER_ALLOWED_NETWORKS.length > 0 ? { allowedNetworks: env.PROFILER_ALLOWED_NETWORKS } : {}),
          allowedHosts: env.PROFILER_ALLOWED_HOSTS,
          capture: env.PROFILER_CAPTURE
        }
      },
      // a socket silent for 2 minutes is closed: the service pays Node's per-request timer for it
      fastify: { logger, trustProxy: fastifyTrustProxy(env.TRUST_PROXY), connectionTimeout: CONNECTION_TIMEOUT }
    })
  } catch (error) {
    redis?.disconnect()
    throw error
  }
  // after the kernel's own onClose (the profiler's last saves), the connection goes
  if (redis !== undefined) app.addHook('onClose', async () => { await redis.quit().catch(() => { redis.disconnect() }) })
  for (const note of services.notes) app.log[note.level](note.message)
  if (env.APP_ENV === 'prod' && env.APP_TRUSTED_HOSTS.length === 0) {
    app.log.warn('fastify-kernel: APP_TRUSTED_HOSTS is not set: every Host header is accepted, and the absolute URLs built from it (trailing-slash redirects) name whatever host a client sent; login redirects stay relative. Set APP_TRUSTED_HOSTS to a regular expression of the hosts the service answers for, such as ^(www\\.)?example\\.com$ (the kernel\'s trustedHosts option).')
  }
  registerHealth(app, redis)
  registerExampleRoutes(app)
  // connects at the first statement: the service starts whether the database is up or not
  const database = env.DATABASE_URL === null ? undefined : createPool({ uri: env.DATABASE_URL, connectionLimit: 4, connectTimeout: 2000 })
  if (database !== undefined) app.addHook('onClose', async () => { await database.end() })
  await registerDemoPage(app, { redis, database })
  return app
}
