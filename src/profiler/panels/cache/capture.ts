import { boundedValue } from '../../bounded-value.js'
import { getKeyIndexes } from '@ioredis/commands'
import { maskRedisArguments, maskRedisError } from '../../../redis/secret-arguments.js'
import type { KernelTraffic } from '../../../kernel/async-context.js'
import type { Redactor } from '../../../http/redact.js'
import { REDACTED, truncate } from '../../../http/redact.js'
import type { Span } from '../../spans.js'
import type { ChannelSubscription } from '../../instrument/channels.js'
import type { TracedContext } from '../../instrument/traced-call.js'
import { tracedCalls } from '../../instrument/traced-call.js'

export const CACHE = 'cache'

/**
 * A command as ioredis (`ioredis:command`) and node-redis (`node-redis:command`) publish it:
 * the arguments already sanitised by the client (values of writes as `?`). node-redis puts the
 * command's name first among its arguments; a MULTI of node-redis is one `node-redis:batch`.
 */
interface RedisTraceContext {
  command?: string
  args?: readonly unknown[]
  database?: number
  batchMode?: 'MULTI' | 'PIPELINE'
  batchSize?: number
}

type RedisClientName = 'ioredis' | 'node-redis'

class RedisCall {
  /** @param read a read's hits and misses, told when the unit ended (its result is not kept) */
  constructor (readonly context: RedisTraceContext & TracedContext, readonly client: RedisClientName, readonly traffic: KernelTraffic | undefined, readonly read?: { hits: number, misses: number }) {}
}

/** Once the unit ended: the command and its arguments as sent, a read's hits and misses; not its result (a cached page, a list). */
export function settleCacheSpan (span: Span): void {
  const call = span.data as unknown
  if (!(call instanceof RedisCall) || !('result' in call.context)) return
  const { command, args, database, batchMode, batchSize, result, error } = call.context
  let read: { hits: number, misses: number } | undefined
  if (batchMode !== 'MULTI' && span.duration !== null && error === undefined && typeof command === 'string') {
    const all = (args ?? []).map(String)
    if (call.client === 'node-redis') all.shift()
    read = hitsOf(command.toUpperCase(), all, result)
  }
  // a large value (SET of megabytes) is kept cut: the panel shows 200 characters of each argument
  const kept = boundedValue(args)
  span.data = new RedisCall({ command, args: kept.value as typeof args, database, batchMode, batchSize }, call.client, call.traffic, read) as unknown as Record<string, unknown>
}

function redisCalls (tracing: string, client: RedisClientName, keep: (context: RedisTraceContext) => boolean = () => true): ChannelSubscription {
  return tracedCalls<RedisTraceContext>(tracing, CACHE, (context, traffic) => keep(context) ? new RedisCall(context, client, traffic) : undefined)
}

/**
 * The versions whose channels the Cache panel reads (an older copy publishes nothing, so nothing
 * of it is seen): ioredis publishes `ioredis:command` from 6.0.0 on, node-redis (`redis`, whose
 * version is its `@redis/client`'s) `node-redis:command` and `node-redis:batch` from 5.12.0 on.
 * .ci/matrix.sh runs cache.test.ts against the oldest and the newest of each.
 */
export const IOREDIS_VERSIONS = '>=6.0.0 <7'
export const NODE_REDIS_VERSIONS = '>=5.12.0 <7'

export const cacheChannels: readonly ChannelSubscription[] = [
  redisCalls('ioredis:command', 'ioredis'),
  redisCalls('node-redis:command', 'node-redis'),
  // a pipeline's commands are published one by one, a transaction's only as its batch
  redisCalls('node-redis:batch', 'node-redis', (context) => context.batchMode === 'MULTI')
]

/** The data of a `cache` span, as profiles store it. */
export interface CacheSpanData {
  command: string
  keys: string[]
  /** the arguments after the command's name, as the client published them (its own masking: `?`), passwords masked, cut */
  args: string[]
  client: string
  database?: number
  /** the kernel's own command (sessions, login throttling, profile storage), shown apart */
  kernel?: true
  /** a library's own command (BullMQ's scripts and reads), shown apart: the library */
  library?: string
  /** what the kernel (or the library) sent it for */
  purpose?: string
  /** a read (READS): how many of its keys (fields, members) it found, and how many it did not */
  hits?: number
  misses?: number
}

/**
 * The reads whose answer says whether the cache had what was asked, and how to count it:
 * - `value`: one key, a nil answer is a miss (`GET`, `HGET`…);
 * - `each`: one answer per key or field, each nil (or 0) a miss (`MGET`, `HMGET`, `SMISMEMBER`);
 * - `filled`: one key, an empty answer is a miss (`HGETALL` of a missing hash answers `{}`);
 * - `count`: the answer is how many of the keys exist (`EXISTS k1 k2` → 1: one hit, one miss),
 *   or 1/0 for one member (`SISMEMBER`, `HEXISTS`).
 * Writes, and reads whose empty answer is an ordinary one (`LLEN`, `TTL`), are neither.
 */
export const READS: Readonly<Record<string, 'value' | 'each' | 'filled' | 'count'>> = {
  GET: 'value',
  GETEX: 'value',
  GETDEL: 'value',
  HGET: 'value',
  LINDEX: 'value',
  ZSCORE: 'value',
  'JSON.GET': 'value',
  MGET: 'each',
  HMGET: 'each',
  SMISMEMBER: 'each',
  'JSON.MGET': 'each',
  HGETALL: 'filled',
  HKEYS: 'filled',
  HVALS: 'filled',
  SMEMBERS: 'filled',
  LRANGE: 'filled',
  ZRANGE: 'filled',
  EXISTS: 'count',
  HEXISTS: 'count',
  SISMEMBER: 'count'
}

const found = (value: unknown): boolean => value !== null && value !== undefined && value !== 0

function isEmpty (value: unknown): boolean {
  if (value === null || value === undefined) return true
  if (Array.isArray(value)) return value.length === 0
  if (value instanceof Map || value instanceof Set) return value.size === 0
  return typeof value === 'object' && Object.keys(value).length === 0
}

/** A read's hits and misses from its answer (see READS), or undefined for any other command. */
export function hitsOf (command: string, args: readonly unknown[], result: unknown): { hits: number, misses: number } | undefined {
  switch (READS[command]) {
    case 'value': return found(result) ? { hits: 1, misses: 0 } : { hits: 0, misses: 1 }
    case 'filled': return isEmpty(result) ? { hits: 0, misses: 1 } : { hits: 1, misses: 0 }
    case 'each': {
      if (!Array.isArray(result)) return undefined
      const hits = result.filter(found).length
      return { hits, misses: result.length - hits }
    }
    case 'count': {
      if (typeof result !== 'number') return undefined
      // EXISTS counts its keys; SISMEMBER and HEXISTS answer for one member
      const asked = command === 'EXISTS' ? args.length : 1
      return { hits: result, misses: Math.max(0, asked - result) }
    }
    default: return undefined
  }
}

const MAX_ARG = 200
const MAX_ARGS = 20
const MAX_NAME = 200

/** Commands that run a script or function with keys, then values: `EVAL script numkeys key… arg…`. */
const SCRIPTS = new Set(['EVAL', 'EVALSHA', 'EVAL_RO', 'EVALSHA_RO', 'FCALL', 'FCALL_RO'])

/**
 * A script's values (its ARGV) are masked as `?`, as the clients mask the values of writes: they
 * carry whatever the caller passes (BullMQ's job data, secrets included), the keys are shown.
 */
function scriptArgs (args: readonly string[]): string[] {
  const keys = Number(args[1])
  if (!Number.isSafeInteger(keys) || keys < 0) return args.slice(0, 2)
  return args.map((arg, index) => index < 2 + keys ? arg : '?')
}

function keysOf (command: string, args: readonly string[]): string[] {
  try {
    return getKeyIndexes(command.toLowerCase(), [...args]).map((index) => args[index as number]!).filter((key) => key !== undefined && key !== '?')
  } catch {
    // a command the table does not know (a module's): its keys are not told apart
    return []
  }
}

/**
 * Raw call → the span's data: keys found, arguments cut, passwords masked (CONFIG SET
 * requirepass, ACL SETUSER >password…: src/redis/secret-arguments.ts, also in the failure's
 * message), the session id in the kernel's own keys masked. (Values of writes are already `?`.)
 */
export function formatCacheSpan (span: Span, redactor: Redactor): void {
  const call = span.data as unknown
  if (!(call instanceof RedisCall)) return
  const { context, traffic } = call
  const hide = (text: string): string => traffic?.secret === undefined || traffic.secret === '' ? text : text.replaceAll(traffic.secret, REDACTED)
  let command: string
  let args: string[]
  if (context.batchMode === 'MULTI') {
    command = 'MULTI'
    args = [`${String(context.batchSize ?? 0)} commands`]
  } else {
    const all = (context.args ?? []).map(String)
    // node-redis puts the command's name first
    if (call.client === 'node-redis') all.shift()
    command = String(context.command ?? '').toUpperCase()
    const masked = maskRedisArguments(command, (SCRIPTS.has(command) ? scriptArgs(all) : all).map(hide), (name) => redactor.isSecret(name))
    args = masked.args
    if (span.error !== undefined) span.error = maskRedisError(span.error, masked)
  }
  const keys = keysOf(command, args)
  const shown = args.slice(0, MAX_ARGS).map((arg) => truncate(arg, MAX_ARG))
  if (args.length > MAX_ARGS) shown.push(`… ${args.length - MAX_ARGS} more`)
  const data: CacheSpanData = { command, keys: keys.map((key) => truncate(key, MAX_ARG)), args: shown, client: call.client }
  if (typeof context.database === 'number') data.database = context.database
  // the answer, when it came (a failed or still running read is neither hit nor miss): told as the unit ended
  if (context.batchMode !== 'MULTI' && span.duration !== null && ('result' in context || call.read !== undefined) && context.error === undefined) {
    const read = call.read ?? hitsOf(command, args, context.result)
    if (read !== undefined) {
      data.hits = read.hits
      data.misses = read.misses
    }
  }
  if (traffic !== undefined) {
    if (traffic.library !== undefined) data.library = traffic.library
    else data.kernel = true
    data.purpose = traffic.purpose
  }
  span.name = truncate(context.batchMode === 'MULTI' ? `MULTI (${args[0]!})` : [command, ...data.keys].join(' '), MAX_NAME)
  span.data = data as unknown as Record<string, unknown>
}
