import { Redis } from 'ioredis'
import { RedisStore } from 'connect-redis'
import { ServiceStartError } from './errors.js'

/** Every call bounded: a Redis that hangs costs a request at most this, then fails (and is handled). */
export const REDIS_COMMAND_TIMEOUT_MS = 500

/** The URL without its password, for messages. */
export function redactedRedisUrl (url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '******'
    return parsed.toString()
  } catch {
    return '(unparseable REDIS_URL)'
  }
}

/**
 * The service's Redis client (ioredis), connected before the app is built so that a wrong URL
 * or a server that is down is a clear message at start. At run time: no offline queue (a
 * command while disconnected fails at once instead of waiting), one retry per command, every
 * command bounded, and reconnection for ever in the background, so the app resumes by itself
 * when Redis is back.
 */
export async function connectRedis (url: string, log: { warn: (fields: object, message: string) => void }): Promise<Redis> {
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000)
  })
  // one warning per outage, not one per reconnection attempt
  let down = false
  client.on('error', (error: Error) => {
    if (down) return
    down = true
    log.warn({ err: error }, 'fastify-kernel service: Redis connection error; retrying in the background')
  })
  client.on('ready', () => { down = false })
  try {
    await client.connect()
  } catch (error) {
    client.disconnect()
    throw new ServiceStartError(`cannot connect to Redis at ${redactedRedisUrl(url)} (REDIS_URL): ${(error as Error).message}. Start Redis, fix REDIS_URL, or unset it to keep sessions and profiles in this process.`, { cause: error })
  }
  return client
}

/**
 * connect-redis, with idle expiry: a read renews the session's expiry in the same round trip
 * (GETEX), so a session expires `ttl` seconds after its last use, as the in-memory store's do,
 * and a request that only reads its session costs one Redis call. (connect-redis itself
 * renews expiry only on writes, or with a second call, `touch`, that @fastify/session never makes.)
 */
export class IdleExpiryRedisStore extends RedisStore {
  constructor (private readonly redis: Redis, private readonly ttlSeconds: number, prefix = 'fastify-kernel:session:') {
    super({ client: redis, prefix, ttl: ttlSeconds, disableTouch: true })
  }

  override async get (sessionId: string, callback?: (error: unknown, session?: unknown) => unknown): Promise<unknown> {
    let session: unknown = null
    try {
      const raw = await this.redis.getex(this.prefix + sessionId, 'EX', this.ttlSeconds)
      session = raw === null ? null : JSON.parse(raw)
    } catch (error) {
      if (callback === undefined) throw error
      return callback(error)
    }
    return callback === undefined ? session : callback(null, session)
  }
}
