import { createHash } from 'node:crypto'
import { errorCodes } from '../errors/codes.js'

/**
 * The little the kernel needs of a Redis client: one generic command call. ioredis' `Redis`
 * (and `Cluster`) have it as is. The kernel never imports a client: the app creates its own,
 * with its own connection settings, and passes it in.
 */
export interface RedisCommands {
  /** arguments are strings, numbers and Buffers (the profile storage sends its bodies as bytes), as ioredis takes them */
  call (command: string, ...args: Array<string | number | Buffer>): Promise<unknown>
}

/**
 * The options by which a kernel feature takes the app's Redis client (profiles, login
 * throttling), as a JSON schema for the features' validators: the client, a key prefix, and a
 * time bound in milliseconds for each call.
 */
export const REDIS_CLIENT_OPTIONS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['client'],
  properties: {
    client: { type: 'object' },
    prefix: { type: 'string', minLength: 1, maxLength: 200 },
    commandTimeout: { type: 'integer', minimum: 1, maximum: 60_000 }
  }
} as const

/**
 * Settles with the command or rejects after `ms`: every call the kernel makes to Redis is
 * bounded in time, whatever the client's own settings (a server that accepts the connection
 * but never answers would otherwise hold a request, or a save, for ever).
 */
export function withDeadline<T> (promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { reject(new errorCodes.KERNEL_REDIS_TIMEOUT(what, ms)) }, ms)
  })
  return Promise.race([promise, expired]).finally(() => { clearTimeout(timer) })
}

/** A Lua script run by its SHA1 (EVALSHA), sent whole once when the server does not know it yet. */
export class LuaScript {
  private readonly sha: string

  constructor (private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex')
  }

  async run (client: RedisCommands, keys: string[], args: Array<string | number | Buffer>): Promise<unknown> {
    try {
      return await client.call('EVALSHA', this.sha, keys.length, ...keys, ...args)
    } catch (error) {
      if (!String((error as Error).message).startsWith('NOSCRIPT')) throw error
      return await client.call('EVAL', this.source, keys.length, ...keys, ...args)
    }
  }
}
