/**
 * The contract of a profile storage (`ProfileStorage`, docs/profiler.md "Storage"), as tests any
 * storage runs: the kernel's three run it, and an app runs it against its own
 * (`import { profileStorageContract } from 'fastify-kernel/testing'`). It asks the storage only
 * through the interface, never its insides, and waits on no real clock: ages are told by a
 * clock the suite moves. It needs no test framework of its own: `t` is tap's, or anything with
 * the four methods of `ContractTest`.
 */
import type { Clock } from '../../clock.js'
import type { Profile, ProfileSummary } from '../profile.js'
import type { ProfileFilter, ProfileStorage } from './storage.js'
// the panels' data types (`profile.collected.db`…) for an app that imports this subpath alone
export type {} from '../augmentations.js'

/** What the suite asks of a test runner: tap's `t` has it. */
export interface ContractTest {
  /** a subtest; the suite awaits what it returns */
  test (name: string, fn: (t: ContractTest) => Promise<void>): unknown
  ok (value: unknown, message: string): unknown
  /** strict equality (`===`) */
  equal (found: unknown, wanted: unknown, message: string): unknown
  /** deep equality */
  same (found: unknown, wanted: unknown, message: string): unknown
}

/** What a storage is opened with, for the suite's cases. */
export interface StorageSettings {
  /** most profiles kept: beyond it, the oldest (by `time`) go first */
  maxProfiles: number
  /** milliseconds a profile is kept after its `time`, as `clock.now()` tells it */
  maxAgeMs: number
  /** the time the storage ages profiles by: the suite moves it */
  clock: Clock
}

/**
 * Opens a new, empty storage with these settings: each case opens its own and closes it (a
 * folder of its own for a file storage, a key prefix of its own for a shared one).
 */
export type OpenStorage = (settings: StorageSettings) => Promise<ProfileStorage>

const TOKEN = /^[0-9a-f]{6}$/
const HOUR = 3_600_000
/** Event-loop turns a shared storage may take to reserve more tokens (a round trip each). */
const TOKEN_WAITS = 2000

/** A clock that moves only when the suite says so; `now()` starts at the real time. */
class SuiteClock implements Clock {
  private readonly epoch = Date.now()
  private elapsed = 0

  now (): number {
    return this.epoch + this.elapsed
  }

  monotonic (): number {
    return 1000 + this.elapsed
  }

  advance (ms: number): void {
    this.elapsed += ms
  }
}

/** A case's storage, its clock, and what it draws and saves. */
class Case {
  private counter = 0

  constructor (readonly t: ContractTest, readonly storage: ProfileStorage, readonly clock: SuiteClock) {}

  /**
   * A token the storage reserved; a shared storage may need a few turns of the event loop to
   * reserve more (asked by the draw that found none), so a dry draw is retried, not failed.
   */
  async token (): Promise<string> {
    for (let wait = 0; wait < TOKEN_WAITS; wait++) {
      const token = this.storage.reserveToken()
      if (token !== undefined) return token
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    this.t.ok(false, `reserveToken() gave no token in ${TOKEN_WAITS} tries`)
    return 'ffffff'
  }

  /** A profile of a request (or, with `kind`, of another unit), under a token the storage reserved unless `fields` has one. */
  async profile (fields: Partial<Profile> = {}): Promise<Profile> {
    const n = ++this.counter
    return {
      version: 2,
      token: fields.token ?? await this.token(),
      method: 'GET',
      url: `http://contract.test/profiles/${n}`,
      statusCode: 200,
      ip: '127.0.0.1',
      time: this.clock.now() - 1000 + n,
      duration: 2.5,
      aborted: false,
      collected: { contract: { n } },
      ...fields
    }
  }

  /** Saves each profile in turn, then releases its token, as the profiler does. */
  async save (...profiles: Profile[]): Promise<Profile[]> {
    for (const profile of profiles) {
      await this.storage.save(profile)
      this.storage.releaseToken(profile.token)
    }
    return profiles
  }

  async tokensFound (filter?: ProfileFilter): Promise<string[]> {
    return (await this.storage.find(filter)).map((summary) => summary.token)
  }
}

/** The tokens of profiles, newest first (every profile of a case has a `time` of its own). */
function newestFirst (profiles: Profile[]): string[] {
  return [...profiles].sort((a, b) => b.time - a.time).map((profile) => profile.token)
}

/** What a summary says of its profile; a request's `kind` may be written or left out. */
function summaryFields (summary: ProfileSummary): Record<string, unknown> {
  const { token, kind, name, parent, method, url, statusCode, ip, time, duration } = summary
  return { token, kind: kind ?? 'request', name, parent, method, url, statusCode, ip, time, duration }
}

/** Strings that are no token: each must read as "not found", and release nothing, without a throw. */
const NOT_TOKENS = [
  '', 'zzzzzz', 'ABCDEF', 'abcde', 'abcdef0', ' abcdef', 'abcdef\n', '../../../etc/passwd', '..%2f..%2fetc',
  'abc/ef', 'p:abcdef', '*', 'abc?de', '\u0000bcdef', '__proto__', 'constructor', 'toString', 'hasOwnProperty',
  'a'.repeat(10_000)
]

/**
 * Runs the contract against storages `open` gives, one subtest per rule. Resolves once every
 * subtest has run.
 */
export async function profileStorageContract (t: ContractTest, open: OpenStorage): Promise<void> {
  /** A case: a storage of its own (with these settings), closed at its end whatever happened. */
  const test = async (name: string, settings: Partial<Omit<StorageSettings, 'clock'>>, body: (c: Case) => Promise<void>): Promise<void> => {
    await t.test(name, async (t) => {
      const clock = new SuiteClock()
      const storage = await open({ maxProfiles: 1000, maxAgeMs: HOUR, ...settings, clock })
      const c = new Case(t, storage, clock)
      try {
        await body(c)
      } finally {
        await storage.close()
      }
    })
  }

  await test('a new storage is empty', {}, async ({ t, storage }) => {
    t.same(await storage.find(), [], 'find() lists nothing')
    t.equal(storage.size, 0, 'its size is 0')
    t.ok(typeof storage.kind === 'string' && storage.kind !== '', 'it has a kind')
  })

  await test('reserveToken: six lower-case hex characters, never one that is reserved or stored', {}, async (c) => {
    const { t, storage } = c
    const first = await Promise.all(Array.from({ length: 300 }, () => c.token()))
    t.ok(first.every((token) => TOKEN.test(token)), 'every token is six lower-case hex characters')
    t.equal(new Set(first).size, first.length, '300 tokens reserved at once: none twice')
    // some are stored, the others stay reserved (requests in flight)
    await c.save(...await Promise.all(first.slice(0, 20).map((token) => c.profile({ token }))))
    const second = await Promise.all(Array.from({ length: 300 }, () => c.token()))
    const taken = new Set(first)
    t.ok(second.every((token) => !taken.has(token)), 'no token of a stored profile, nor of one still reserved, is handed out again')
    t.equal(new Set(second).size, second.length, 'nor twice among the new ones')
    t.equal(storage.size, 20, 'the stored ones are kept')
  })

  await test('releaseToken: any token, reserved or not, and any string, never a throw', {}, async (c) => {
    const { t, storage } = c
    const token = await c.token()
    const threw: string[] = []
    for (const released of [token, token, 'abcdef', ...NOT_TOKENS]) {
      try {
        storage.releaseToken(released)
      } catch (error) {
        threw.push(`${JSON.stringify(released.slice(0, 20))}: ${(error as Error).message}`)
      }
    }
    t.same(threw, [], 'releasing twice, an unknown token or what is no token throws nothing')
  })

  await test('save, then load: the profile as JSON gives it back, each load a copy of its own', {}, async (c) => {
    const { t, storage } = c
    const parent = await c.profile()
    const unit = await c.profile({
      kind: 'job',
      name: 'books:import',
      parent: parent.token,
      method: 'JOB',
      url: 'books:import',
      statusCode: 0,
      ip: '',
      collected: {
        nested: { list: [1, 'two', { three: true }, null], empty: {}, none: [] },
        text: 'ünïcødé ✓ "quoted" <b>&amp;</b>\n\ttabbed \\ back',
        numbers: { negative: -1.5, big: 2 ** 53 - 1, zero: 0 },
        left: undefined
      }
    })
    await c.save(parent, unit)
    const expected = JSON.parse(JSON.stringify(unit)) as Profile
    const loaded = await storage.load(unit.token)
    t.same(loaded, expected, 'what load() gives is the profile as JSON gives it back')
    t.same(await storage.load(parent.token), JSON.parse(JSON.stringify(parent)), 'a request\'s profile too')
    if (loaded === undefined) return
    (loaded.collected.nested as { list: unknown[] }).list.push('changed')
    loaded.statusCode = 99
    const again = await storage.load(unit.token)
    t.same(again, expected, 'changing a loaded profile changes nothing stored')
    t.ok(again !== loaded, 'each load gives a copy of its own')
  })

  await test('load: undefined for an unknown token, a token reserved but not saved, and any string that is no token, never a throw', {}, async (c) => {
    const { t, storage } = c
    const [kept] = await c.save(await c.profile())
    const reserved = await c.token()
    const unknown = await c.token()
    storage.releaseToken(unknown)
    t.equal(await storage.load(unknown), undefined, 'an unknown token')
    t.equal(await storage.load(reserved), undefined, 'a reserved token without a profile')
    const results: string[] = []
    const lookAlikes = [` ${kept.token}`, `${kept.token}/`, `${kept.token}.json`, ...(kept.token.toUpperCase() === kept.token ? [] : [kept.token.toUpperCase()])]
    for (const token of [...NOT_TOKENS, ...lookAlikes]) {
      try {
        const loaded = await storage.load(token)
        if (loaded !== undefined) results.push(`${JSON.stringify(token.slice(0, 20))} found a profile`)
      } catch (error) {
        results.push(`${JSON.stringify(token.slice(0, 20))} threw: ${(error as Error).message}`)
      }
    }
    t.same(results, [], 'what is no token, or only looks like a stored one, reads as not found')
    t.same((await storage.load(kept.token))?.token, kept.token, 'the stored profile is still found by its token')
  })

  await test('find: summaries of the profiles, newest first by time, whatever the order of saving', {}, async (c) => {
    const { t, storage } = c
    const profiles = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => c.profile({ time: c.clock.now() - 10_000 + i * 1000 })))
    // saved out of order
    await c.save(...[3, 0, 5, 1, 4, 2].map((i) => profiles[i]))
    const found = await storage.find()
    t.same(found.map((summary) => summary.token), newestFirst(profiles), 'newest first')
    const byToken = new Map(profiles.map((profile) => [profile.token, profile]))
    t.same(found.map(summaryFields), found.map((summary) => summaryFields(byToken.get(summary.token)!)), 'each with the summary fields of its profile')
    t.ok(found.every((summary) => !('collected' in summary)), 'summaries, not whole profiles')
  })

  await test('find: at most 50 unless a limit says otherwise, the newest', {}, async (c) => {
    const { t, storage } = c
    const profiles = await Promise.all(Array.from({ length: 60 }, () => c.profile()))
    // saved at once, as under load
    await Promise.all(profiles.map(async (profile) => { await storage.save(profile); storage.releaseToken(profile.token) }))
    t.equal(storage.size, 60, 'every one of 60 saves running at once is kept')
    const newest = newestFirst(profiles)
    t.same(await c.tokensFound(), newest.slice(0, 50), 'find() gives the 50 newest')
    t.same(await c.tokensFound({ limit: 60 }), newest, 'limit: 60 gives them all')
    t.same(await c.tokensFound({ limit: 3 }), newest.slice(0, 3), 'limit: 3 the three newest')
  })

  await test('find: each filter, alone and together', {}, async (c) => {
    const { t } = c
    const at = (i: number): number => c.clock.now() - 100_000 + i * 1000
    const a = await c.profile({ time: at(1), url: 'http://contract.test/books?page=2', ip: '127.0.0.1' })
    const b = await c.profile({ time: at(2), method: 'POST', statusCode: 201, url: 'http://contract.test/books', ip: '10.0.0.7' })
    const cc = await c.profile({ time: at(3), statusCode: 404, url: 'http://contract.test/missing', ip: '10.0.0.8' })
    const d = await c.profile({ time: at(4), method: 'DELETE', statusCode: 500, url: 'http://contract.test/books/1', ip: '::1' })
    const e = await c.profile({ time: at(5), kind: 'job', name: 'books:import', parent: a.token, method: 'JOB', statusCode: 0, url: 'books:import', ip: '' })
    const f = await c.profile({ time: at(6), kind: 'job', name: 'mail:send', parent: a.token, method: 'JOB', statusCode: 1, url: 'mail:send', ip: '' })
    const g = await c.profile({ time: at(7), kind: 'command', name: 'cache:clear', method: 'COMMAND', statusCode: 0, url: 'cache:clear', ip: '' })
    // a request may carry its kind, or not (profiles stored before units of work have none)
    const h = await c.profile({ time: at(8), kind: 'request', statusCode: 302, url: 'http://contract.test/login', ip: '192.168.1.20' })
    // saved in an order of their own: find() orders them
    await c.save(e, a, h, b, g, cc, f, d)
    const tokens = (...profiles: Profile[]): string[] => newestFirst(profiles)
    const cases: Array<[ProfileFilter, string[]]> = [
      [{}, tokens(a, b, cc, d, e, f, g, h)],
      [{ kind: 'request' }, tokens(a, b, cc, d, h)],
      [{ kind: 'job' }, tokens(e, f)],
      [{ kind: 'command' }, tokens(g)],
      [{ kind: 'task' }, []],
      [{ name: 'books' }, tokens(e)],
      [{ name: ':' }, tokens(e, f, g)],
      [{ parent: a.token }, tokens(e, f)],
      [{ parent: b.token }, []],
      [{ method: 'POST' }, tokens(b)],
      [{ method: 'post' }, tokens(b)],
      [{ method: 'JOB' }, tokens(e, f)],
      [{ status: '404' }, tokens(cc)],
      [{ status: '4xx' }, tokens(cc)],
      [{ status: '2XX' }, tokens(a, b)],
      [{ status: '5xx' }, tokens(d)],
      [{ status: '3xx' }, tokens(h)],
      [{ status: '0' }, tokens(e, g)],
      [{ status: '1' }, tokens(f)],
      [{ url: 'books' }, tokens(a, b, d, e)],
      [{ url: '?page=2' }, tokens(a)],
      [{ ip: '10.0.0' }, tokens(b, cc)],
      [{ ip: '::1' }, tokens(d)],
      [{ start: cc.time }, tokens(cc, d, e, f, g, h)],
      [{ end: cc.time }, tokens(a, b, cc)],
      [{ start: cc.time, end: f.time }, tokens(cc, d, e, f)],
      [{ start: h.time + 1 }, []],
      [{ limit: 3 }, tokens(f, g, h)],
      [{ kind: 'request', limit: 2 }, tokens(d, h)],
      [{ status: '2xx', limit: 1 }, tokens(b)],
      [{ method: 'GET', url: 'contract.test', status: '2xx', ip: '127.0.0.1' }, tokens(a)],
      [{ kind: 'job', name: 'mail', parent: a.token }, tokens(f)],
      [{ kind: 'job', start: f.time, limit: 5 }, tokens(f)]
    ]
    // named by the profiles' letters, not their tokens and times
    const names = new Map<unknown, string>([[a.token, 'a'], [b.token, 'b'], [cc.time, 'c.time'], [f.time, 'f.time'], [h.time + 1, 'h.time + 1']])
    for (const [filter, wanted] of cases) {
      const shown = Object.entries(filter).map(([key, value]) => `${key}: ${names.get(value) ?? JSON.stringify(value)}`).join(', ')
      t.same(await c.tokensFound(filter), wanted, `find({ ${shown} })`)
    }
  })

  await test('bounded by count: beyond maxProfiles the oldest go first', { maxProfiles: 5 }, async (c) => {
    const { t, storage } = c
    const saved: Profile[] = []
    let over = 0
    for (let i = 0; i < 12; i++) {
      saved.push(...await c.save(await c.profile()))
      if (storage.size > 5) over++
    }
    t.equal(over, 0, 'its size never exceeds maxProfiles')
    t.equal(storage.size, 5, 'it keeps maxProfiles')
    t.same(await c.tokensFound({ limit: 100 }), newestFirst(saved).slice(0, 5), 'the five newest are kept')
    t.equal(await storage.load(saved[0].token), undefined, 'the oldest is gone')
    t.equal((await storage.load(saved[11].token))?.token, saved[11].token, 'the newest is there')
    const burst = await Promise.all(Array.from({ length: 20 }, () => c.profile()))
    await Promise.all(burst.map((profile) => storage.save(profile)))
    t.same(await c.tokensFound({ limit: 100 }), newestFirst(burst).slice(0, 5), 'saves running at once keep the bound too')
    t.equal(storage.size, 5, 'and its size is maxProfiles')
  })

  await test('bounded by age: older than maxAge by its time, a profile is neither found nor loaded', { maxAgeMs: 60_000 }, async (c) => {
    const { t, storage, clock } = c
    const fresh = await c.profile({ time: clock.now() })
    const older = await c.profile({ time: clock.now() - 30_000 })
    await c.save(fresh, older)
    const present = async (profile: Profile): Promise<boolean> => {
      const loaded = (await storage.load(profile.token)) !== undefined
      const found = (await c.tokensFound({ limit: 100 })).includes(profile.token)
      t.equal(loaded, found, `${profile.token}: load() and find() agree`)
      return loaded && found
    }
    clock.advance(30_000)
    t.ok(await present(older), 'as old as maxAge: kept')
    clock.advance(1)
    t.equal(await present(older), false, 'a millisecond older: gone (its age counts from its time, not from its save)')
    t.ok(await present(fresh), 'a younger one stays')
    clock.advance(30_000)
    t.equal(await present(fresh), false, 'and goes in its turn')
    const stale = await c.profile({ time: clock.now() - 60_001 })
    await c.save(stale)
    t.equal(await present(stale), false, 'a profile saved already older than maxAge is never found')
    const kept = await c.profile({ time: clock.now() })
    await c.save(kept)
    t.ok(await present(kept), 'a new one is')
  })

  await test('purge: every profile goes, and the storage works on', {}, async (c) => {
    const { t, storage } = c
    const saved = await c.save(await c.profile(), await c.profile(), await c.profile())
    t.equal(storage.size, 3, 'three saved, size 3')
    await storage.purge()
    t.same(await storage.find(), [], 'find() lists nothing')
    t.equal(storage.size, 0, 'size 0')
    for (const profile of saved) t.equal(await storage.load(profile.token), undefined, `${profile.token} is gone`)
    const [after] = await c.save(await c.profile())
    t.same(await c.tokensFound(), [after.token], 'a profile saved after the purge is kept')
    t.equal(storage.size, 1, 'its size counts it')
  })

  await t.test('close: the saves it accepted have settled when it resolves', async (t) => {
    const clock = new SuiteClock()
    const storage = await open({ maxProfiles: 1000, maxAgeMs: HOUR, clock })
    const c = new Case(t, storage, clock)
    const profiles = await Promise.all(Array.from({ length: 10 }, () => c.profile()))
    let settled = 0
    // not awaited: the app closes while the last requests' profiles are being saved
    for (const profile of profiles) storage.save(profile).then(() => { settled++ }, () => { settled++ })
    await storage.close()
    for (let turn = 0; turn < 10; turn++) await null
    t.equal(settled, profiles.length, 'every save is settled (stored or refused) once close() resolved')
  })
}
