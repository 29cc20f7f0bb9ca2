import { randomBytes } from 'node:crypto'
import type { Profile, ProfileSummary } from '../profile.js'
import { summarize } from '../profile.js'
import { isSummary, parseProfile } from '../profile-shape.js'
import { randomToken, TOKEN_PATTERN } from '../token.js'
import type { ProfileFilter, ProfileStorage } from './storage.js'
import { selectSummaries } from './storage.js'
import { LuaScript, withDeadline } from '../../redis/commands.js'
import { asKernelTraffic } from '../../kernel/async-context.js'
import type { RedisCommands } from '../../redis/commands.js'
import { ThrottledWarning } from '../../log/throttled-warning.js'
import type { Clock } from '../../clock.js'
import { systemClock } from '../../clock.js'
import { errorCodes } from '../../errors/codes.js'

/** what the profile storage's commands are, among the kernel's own Redis traffic */
const STORAGE_TRAFFIC = { purpose: 'profile storage' }

export interface RedisProfileStorageOptions {
  /** the app's client (ioredis); the storage never closes it */
  client: RedisCommands
  /** key prefix; default `fastify-kernel:{profiler}:` (one hash slot, so a Redis Cluster works too) */
  prefix?: string
  maxProfiles: number
  maxAgeMs: number
  /** most milliseconds any one call may take (default 500); beyond it the call fails */
  commandTimeoutMs?: number
  log: { warn: (fields: object, message: string) => void }
  /**
   * what dates the profiles' ages and this process's reservations and retry delay (default the
   * system clock); the expiry of keys is Redis' own
   */
  clock?: Clock
  /**
   * batches of saves waiting while one is sent and not answered, beyond which the saves of a
   * turn are dropped whole (default 4; each holds up to 256 profiles or 4 MB)
   */
  maxBatchesWaiting?: number
}

/** Tokens reserved ahead in one call, and the level that triggers the next call. */
const POOL_SIZE = 256
const POOL_LOW = 96
/**
 * A load that drains the pool before the next batch arrives (thousands of units a second,
 * each profiled) doubles the batch, up to this: units are then not left unprofiled for the
 * round trip's sake. Unused reservations are given back, and expire anyway.
 */
const MAX_POOL_SIZE = 4096
/** a reservation lives this long in Redis */
const RESERVATION_TTL_S = 600
/**
 * The pool's reservations are renewed this often (their TTL set again, one call for all), so
 * that an idle process keeps them: the first requests after an idle hour are profiled as any.
 */
const RENEW_EVERY_MS = 60_000
/** a reservation not renewed for this long (the process was suspended, its timers late) is renewed at its draw */
const RENEW_AFTER_MS = RESERVATION_TTL_S * 1000 / 2
/** after a failed call, the next reservation attempt waits this long (Redis down) */
export const RETRY_AFTER_MS = 1000

/** ARGV: prefix, marker, ttl, token... → the tokens now reserved for this process */
const RESERVE = new LuaScript(`
local out = {}
for i = 4, #ARGV do
  if redis.call('SET', ARGV[1] .. ARGV[i], ARGV[2], 'NX', 'EX', ARGV[3]) then out[#out + 1] = ARGV[i] end
end
return out`)

/**
 * ARGV: prefix, marker, ttl, token... → the tokens still reserved for this process: each one's
 * reservation renewed, or made again if it expired meanwhile (unless another process has
 * reserved or stored that token since)
 */
const RENEW = new LuaScript(`
local out = {}
for i = 4, #ARGV do
  local key = ARGV[1] .. ARGV[i]
  local current = redis.call('GET', key)
  if current == ARGV[2] then
    redis.call('EXPIRE', key, ARGV[3])
    out[#out + 1] = ARGV[i]
  elseif not current and redis.call('SET', key, ARGV[2], 'NX', 'EX', ARGV[3]) then
    out[#out + 1] = ARGV[i]
  end
end
return out`)

/** ARGV: prefix, marker, token... : ends reservations that are still this process's */
const RELEASE = new LuaScript(`
for i = 3, #ARGV do
  local key = ARGV[1] .. ARGV[i]
  if redis.call('GET', key) == ARGV[2] then redis.call('DEL', key) end
end
return 0`)

/**
 * KEYS: index, then one body key per profile. ARGV: marker, max age (s), max profiles, oldest
 * time kept, body prefix, then per profile its body, index member and time. Stores each profile
 * under a token this process reserved, or whose reservation expired with no other process
 * taking the token since (a process suspended past the reservation's TTL loses no profile);
 * then trims the index by age and count (deleting the bodies it drops). Atomic: two processes
 * saving at once never leave the index over its bound.
 * → per profile 1 (stored) or -1 (token not ours), then the index size.
 */
const SAVE = new LuaScript(`
local results = {}
for i = 2, #KEYS do
  local at = 5 + (i - 2) * 3
  local current = redis.call('GET', KEYS[i])
  if current and current ~= ARGV[1] then
    results[#results + 1] = -1
  else
    redis.call('SET', KEYS[i], ARGV[at + 1], 'EX', ARGV[2])
    redis.call('ZADD', KEYS[1], ARGV[at + 3], ARGV[at + 2])
    results[#results + 1] = 1
  end
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[4])
for _, member in ipairs(expired) do redis.call('DEL', ARGV[5] .. string.sub(member, 1, 6)) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[4])
local excess = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
if excess > 0 then
  for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, excess - 1)) do redis.call('DEL', ARGV[5] .. string.sub(member, 1, 6)) end
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, excess - 1)
end
results[#results + 1] = redis.call('ZCARD', KEYS[1])
return results`)

/**
 * A batch, the saves of a turn sent in one call (of several turns while the call before is
 * unanswered), holds at most this many profiles or bytes: a call stays short for the other
 * clients of the server.
 */
const BATCH_PROFILES = 256
const BATCH_BYTES = 4 * 1024 * 1024
/** batches waiting for the call under way, beyond which a turn's saves are dropped whole */
const MAX_BATCHES_WAITING = 4

interface QueuedSave { token: string, start: number, end: number, member: string, time: number, resolve: () => void, reject: (error: unknown) => void }

/**
 * Saves sent in one call: their bodies serialised into one buffer as they are saved (sent as
 * bytes, not encoded again by the client), a window of it per profile.
 */
interface Batch {
  buffer: Buffer
  length: number
  saves: QueuedSave[]
}

interface Reserved { token: string, at: number }

/**
 * Profiles in Redis, shared by every process of the app. Keys (under the prefix):
 * `p:<token>` holds a profile (expiring with `maxAge`) or, before it is saved, this process's
 * reservation of the token; `index` is a sorted set of summaries by time, for `latest` and the
 * search page, trimmed to `maxProfiles` atomically on each save.
 *
 * Tokens are unique across processes by Redis' set-if-absent: each process reserves a batch
 * ahead (one call for 256), so drawing a token stays synchronous and costs no round trip. When
 * Redis is down or slow, calls fail within `commandTimeoutMs`: the pool runs dry, units are
 * then not profiled (counted as dropped), saves fail (counted), and all resumes by itself
 * once Redis answers again — the client reconnects; nothing here needs a restart.
 */
export class RedisProfileStorage implements ProfileStorage {
  readonly kind = 'redis'
  private readonly client: RedisCommands
  private readonly prefix: string
  private readonly bodyPrefix: string
  private readonly indexKey: string
  private readonly timeoutMs: number
  /** what this process's reservations hold until the profile replaces them */
  private readonly marker = `r:${randomBytes(8).toString('hex')}`
  private readonly pool: Reserved[] = []
  /** tokens handed out and not saved yet */
  private readonly outstanding = new Set<string>()
  private releasing: string[] = []
  private refilling = false
  /** the reservation started by the last draw that ran low */
  private refillRun: Promise<void> = Promise.resolve()
  private failedAt = -Infinity
  /** tokens reserved per call: POOL_SIZE, doubled each time a draw found none */
  private poolSize = POOL_SIZE
  private grown = false
  private get poolLow (): number {
    return POOL_LOW * this.poolSize / POOL_SIZE
  }

  private lastSize = 0
  private readonly timer: NodeJS.Timeout
  private readonly renewTimer: NodeJS.Timeout
  private renewing: Promise<void> | undefined
  private readonly reserveFailure: ThrottledWarning
  private readonly clock: Clock
  private readonly maxWaiting: number

  private constructor (private readonly options: RedisProfileStorageOptions) {
    this.client = options.client
    this.clock = options.clock ?? systemClock
    this.maxWaiting = options.maxBatchesWaiting ?? MAX_BATCHES_WAITING
    this.prefix = options.prefix ?? 'fastify-kernel:{profiler}:'
    this.bodyPrefix = `${this.prefix}p:`
    this.indexKey = `${this.prefix}index`
    this.timeoutMs = options.commandTimeoutMs ?? 500
    this.reserveFailure = new ThrottledWarning(options.log, 'fastify-kernel: cannot reserve profiler tokens in Redis; requests are not profiled (counted as dropped) until it answers')
    // unused reservations are given back in batches, not one call per dropped unit
    this.timer = setInterval(() => { this.flushReleases().catch(() => undefined) }, 1000)
    this.timer.unref()
    this.renewTimer = setInterval(() => { this.renewPool().catch(() => undefined) }, RENEW_EVERY_MS)
    this.renewTimer.unref()
  }

  /** Creates the storage and reserves its first tokens; rejects when Redis cannot be reached. */
  static async open (options: RedisProfileStorageOptions): Promise<RedisProfileStorage> {
    const storage = new RedisProfileStorage(options)
    try {
      await storage.refill()
    } catch (error) {
      clearInterval(storage.timer)
      clearInterval(storage.renewTimer)
      throw error
    }
    return storage
  }

  /** the profiles in the index when this process last saved or searched (other processes' included) */
  get size (): number {
    return this.lastSize
  }

  /** Every command of the storage is the kernel's own traffic: a reservation drawn during a request is shown apart from the app's. */
  private call<T> (what: string, send: () => Promise<unknown>): Promise<T> {
    return withDeadline(asKernelTraffic(STORAGE_TRAFFIC, send), this.timeoutMs, what) as Promise<T>
  }

  reserveToken (): string | undefined {
    const now = this.clock.monotonic()
    // reservations not renewed for long (the process was suspended, its timers ran late) may
    // have expired in Redis: still handed out (a save stores a token whose reservation expired,
    // unless another process took it since), and renewed now, for the next draws
    if (this.pool.length > 0 && now - this.pool[0].at > RENEW_AFTER_MS && now - this.failedAt >= RETRY_AFTER_MS) this.renewPool().catch(() => undefined)
    if (this.pool.length < this.poolLow && !this.refilling && now - this.failedAt >= RETRY_AFTER_MS) {
      this.refillRun = this.refill().catch((error: unknown) => { this.reserveFailure.warn({ err: error }) })
    }
    const next = this.pool.shift()
    if (next === undefined) {
      // once per dry spell: the next batch is twice as large
      if (!this.grown) this.poolSize = Math.min(MAX_POOL_SIZE, this.poolSize * 2)
      this.grown = true
      return undefined
    }
    if (this.outstanding.size >= 10_000) this.outstanding.clear() // hijacked replies never release
    this.outstanding.add(next.token)
    return next.token
  }

  releaseToken (token: string): void {
    // a saved profile replaced the reservation; an unsaved one is given back, in the next batch
    if (!this.outstanding.delete(token)) return
    this.releasing.push(token)
    if (this.releasing.length >= POOL_SIZE) this.flushReleases().catch(() => undefined)
  }

  private async refill (): Promise<void> {
    this.refilling = true
    try {
      const candidates = new Set<string>()
      while (candidates.size < this.poolSize) candidates.add(randomToken())
      const at = this.clock.monotonic()
      const reserved = await this.call<string[]>('a token reservation', () => RESERVE.run(this.client, [], [this.bodyPrefix, this.marker, RESERVATION_TTL_S, ...candidates]))
      for (const token of reserved) this.pool.push({ token, at })
      this.grown = false
    } catch (error) {
      this.failedAt = this.clock.monotonic()
      throw error
    } finally {
      this.refilling = false
    }
  }

  /**
   * Renews the pool's reservations (one call): each one's TTL set again, an expired one made
   * again; the tokens another process has taken since leave the pool. One at a time.
   */
  renewPool (): Promise<void> {
    this.renewing ??= this.renew().catch((error: unknown) => {
      // Redis down: the draws do not ask again before the retry delay
      this.failedAt = this.clock.monotonic()
      throw error
    }).finally(() => { this.renewing = undefined })
    return this.renewing
  }

  private async renew (): Promise<void> {
    if (this.pool.length === 0) return
    const renewing = this.pool.map((reserved) => reserved.token)
    const at = this.clock.monotonic()
    const kept = new Set(await this.call<string[]>('a token renewal', () => RENEW.run(this.client, [], [this.bodyPrefix, this.marker, RESERVATION_TTL_S, ...renewing])))
    const asked = new Set(renewing)
    // drawn meanwhile: out of the pool already; reserved meanwhile (a refill): not asked about
    for (let i = this.pool.length - 1; i >= 0; i--) {
      const reserved = this.pool[i]!
      if (!asked.has(reserved.token)) continue
      if (kept.has(reserved.token)) reserved.at = at
      else this.pool.splice(i, 1)
    }
    // renewed ones are as fresh as a refill's: the pool stays in order of age
    this.pool.sort((a, b) => a.at - b.at)
  }

  /** Settles once the reservation a draw started (if any) is done, whether it succeeded or not. */
  async refilled (): Promise<void> {
    await this.refillRun
  }

  private async flushReleases (): Promise<void> {
    if (this.releasing.length === 0) return
    const tokens = this.releasing
    this.releasing = []
    // best effort: a reservation not given back expires by itself
    await this.call('a token release', () => RELEASE.run(this.client, [], [this.bodyPrefix, this.marker, ...tokens])).catch(() => undefined)
  }

  /**
   * Queues the profile for the next call: one call a turn of the event loop at most, and one
   * call at a time (one round trip and one script run for every profile saved meanwhile, rather
   * than one each). While a call is unanswered, the saves of the turns after it wait, in up to
   * MAX_BATCHES_WAITING batches; beyond that (Redis slow, or stopped until the call times out)
   * the saves of a turn are refused together (KERNEL_PROFILES_DROPPED, counted by the profiler
   * as dropped): memory never grows with a backlog.
   */
  async save (profile: Profile): Promise<void> {
    const token = profile.token
    if (!TOKEN_PATTERN.test(token)) throw new errorCodes.KERNEL_INVALID_TOKEN(token)
    if (this.droppingTurn) {
      this.droppedProfiles++
      throw new errorCodes.KERNEL_PROFILES_DROPPED(this.waiting.length)
    }
    let batch = this.waiting.at(-1)
    if (batch === undefined || batch.saves.length >= BATCH_PROFILES || batch.length >= BATCH_BYTES) {
      if (this.waiting.length >= this.maxWaiting) {
        // refused whole, for the rest of this turn
        this.droppingTurn = true
        this.droppedBatches++
        this.droppedProfiles++
        this.scheduleSend()
        throw new errorCodes.KERNEL_PROFILES_DROPPED(this.waiting.length)
      }
      batch = { buffer: Buffer.allocUnsafe(64 * 1024), length: 0, saves: [] }
      this.waiting.push(batch)
    }
    const summary = summarize(profile)
    const body = JSON.stringify(profile)
    // at most 3 bytes of UTF-8 a UTF-16 code unit
    const needed = batch.length + body.length * 3
    if (needed > batch.buffer.length) {
      const larger = Buffer.allocUnsafe(Math.max(needed, 2 * batch.buffer.length))
      batch.buffer.copy(larger, 0, 0, batch.length)
      batch.buffer = larger
    }
    const start = batch.length
    batch.length += batch.buffer.write(body, start)
    const end = batch.length
    this.scheduleSend()
    await new Promise<void>((resolve, reject) => {
      batch.saves.push({ token, start, end, member: token + JSON.stringify(summary), time: summary.time, resolve, reject })
    })
  }

  /** what Redis being behind cost: batches of a turn refused whole, and their profiles */
  droppedBatches = 0
  droppedProfiles = 0
  /** batches waiting for the call under way, oldest first; the last one fills */
  private readonly waiting: Batch[] = []
  /** the call under way */
  private sending: Promise<void> | undefined
  private sendScheduled = false
  /** the saves of this turn are refused */
  private droppingTurn = false

  private scheduleSend (): void {
    if (this.sendScheduled) return
    this.sendScheduled = true
    setImmediate(this.sendNext)
  }

  /** At the end of a turn, or once the call under way is answered: the oldest waiting batch, unless a call is under way. */
  private readonly sendNext = (): void => {
    this.sendScheduled = false
    this.droppingTurn = false
    if (this.sending !== undefined) return
    const batch = this.waiting.shift()
    if (batch === undefined) return
    this.sending = this.saveBatch(batch).catch(() => undefined).finally(() => {
      this.sending = undefined
      if (this.waiting.length > 0) this.scheduleSend()
    })
  }

  private async saveBatch (batch: Batch): Promise<void> {
    const saves = batch.saves
    const maxAgeS = Math.max(1, Math.ceil(this.options.maxAgeMs / 1000))
    const args: Array<string | number | Buffer> = [this.marker, maxAgeS, this.options.maxProfiles, this.clock.now() - this.options.maxAgeMs, this.bodyPrefix]
    for (const save of saves) args.push(batch.buffer.subarray(save.start, save.end), save.member, save.time)
    let results: number[]
    try {
      results = await this.call<number[]>('a profile save', () => SAVE.run(this.client, [this.indexKey, ...saves.map((save) => this.bodyPrefix + save.token)], args))
    } catch (error) {
      for (const save of saves) save.reject(error)
      return
    }
    this.lastSize = results[saves.length]!
    saves.forEach((save, i) => {
      if (results[i]! < 0) {
        save.reject(new errorCodes.KERNEL_TOKEN_NOT_RESERVED(save.token))
        return
      }
      this.outstanding.delete(save.token)
      save.resolve()
    })
  }

  async load (token: string): Promise<Profile | undefined> {
    if (!TOKEN_PATTERN.test(token)) return undefined
    const text = await this.call<string | null>('a profile read', () => this.client.call('GET', this.bodyPrefix + token))
    // absent, expired, or only reserved
    if (text === null || !text.startsWith('{')) return undefined
    const now = this.clock.now()
    const profile = parseProfile(text, token, (error) => {
      this.options.log.warn({ err: error, token }, 'fastify-kernel: a profile in Redis is not readable; answered as not found')
    }, now)
    // its key expires by Redis' own time, a little after: the age is the clock's, as for `find`
    return profile === undefined || now - profile.time > this.options.maxAgeMs ? undefined : profile
  }

  async find (filter: ProfileFilter = {}): Promise<ProfileSummary[]> {
    const limit = filter.limit ?? 50
    const now = this.clock.now()
    const oldest = Math.max(now - this.options.maxAgeMs, filter.start ?? 0)
    const newest = filter.end ?? '+inf'
    // filters other than time are applied here: the index holds at most maxProfiles summaries
    const { start: _start, end: _end, limit: _limit, ...others } = filter
    const timeOnly = Object.values(others).every((value) => value === undefined)
    // the count with it: other processes (a worker, a console command) store into the same index,
    // and the size this one saw at its own last save would say fewer than the search shows
    const [members, live] = await Promise.all([
      this.call<string[]>('a profile search', () => this.client.call('ZREVRANGEBYSCORE', this.indexKey, newest, oldest, ...(timeOnly ? ['LIMIT', 0, limit] : []))),
      this.call<number>('a profile count', () => this.client.call('ZCOUNT', this.indexKey, now - this.options.maxAgeMs, '+inf'))
    ])
    if (typeof live === 'number') this.lastSize = live
    const summaries: ProfileSummary[] = []
    for (const member of members) {
      try {
        const summary: unknown = JSON.parse(member.slice(6))
        if (isSummary(summary, now)) summaries.push(summary)
      } catch {} // a member written by something else
    }
    return selectSummaries(summaries, filter)
  }

  async purge (): Promise<void> {
    let cursor = '0'
    do {
      const [next, keys] = await this.call<[string, string[]]>('a purge scan', () => this.client.call('SCAN', cursor, 'MATCH', `${this.prefix}*`, 'COUNT', 500))
      if (keys.length > 0) await this.call('a purge', () => this.client.call('UNLINK', ...keys))
      cursor = next
    } while (cursor !== '0')
    this.pool.length = 0
    this.lastSize = 0
  }

  /** Sends the saves still queued and settles once every save it accepted is answered, then gives back its unused tokens. */
  async close (): Promise<void> {
    clearInterval(this.timer)
    clearInterval(this.renewTimer)
    await this.renewing?.catch(() => undefined)
    while (this.sending !== undefined || this.waiting.length > 0) {
      this.sendNext()
      await this.sending
    }
    for (const { token } of this.pool) this.releasing.push(token)
    this.pool.length = 0
    await this.flushReleases()
  }
}
