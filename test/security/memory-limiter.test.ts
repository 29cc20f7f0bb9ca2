import t from 'tap'
import { RateLimiterRedis, RateLimiterRes, RLWrapperTimeouts } from 'rate-limiter-flexible'
import { ClockedMemoryLimiter } from '../../src/security/memory-limiter.js'
import { ManualClock } from '../clock.js'

t.test('the memory limiter counts as RateLimiterMemory, in windows of its clock', async (t) => {
  const clock = new ManualClock()
  const limiter = new ClockedMemoryLimiter('p', 2, 10, clock)
  t.equal(limiter.keyPrefix, 'p')
  const first = await limiter.consume('k')
  t.same([first.consumedPoints, first.remainingPoints, first.msBeforeNext, first.isFirstInDuration], [1, 1, 10_000, true], 'the first point opens a window')
  clock.advance(4000)
  t.same([(await limiter.consume('k')).msBeforeNext], [6000], 'the next counts in it')
  const refused = await limiter.consume('k').then(() => null, (res: unknown) => res)
  t.ok(refused instanceof RateLimiterRes, 'over its points: rejected with the result, as the library does')
  t.equal((refused as RateLimiterRes).consumedPoints, 3)
  await limiter.reward('k')
  t.equal((await limiter.get('k'))!.consumedPoints, 2, 'a point given back lowers the count')
  t.equal((await limiter.get('k'))!.msBeforeNext, 6000, 'without moving the window\'s end')
  t.equal(await limiter.get('other'), null)
  clock.advance(6000)
  t.equal((await limiter.get('k'))!.consumedPoints, 2, 'at its very end the window still holds')
  clock.advance(1)
  t.equal(await limiter.get('k'), null, 'after it, the key is forgotten')
  t.equal((await limiter.penalty('k', 2)).isFirstInDuration, true, 'and the next points open a new window')
  t.equal(await limiter.delete('k'), true)
  t.equal(await limiter.get('k'), null)
})

t.test('it serves as the insurance of rate-limiter-flexible\'s Redis limiter, which sets no blocking on it', async (t) => {
  const insuranceLimiter = new ClockedMemoryLimiter('p', 1, 10, new ManualClock())
  const limiter = new RateLimiterRedis({ storeClient: {}, keyPrefix: 'p', points: 1, duration: 10, insuranceLimiter, rejectIfRedisNotReady: true })
  t.ok(new RLWrapperTimeouts({ limiter, timeoutMs: 100, insuranceLimiter }))
  t.equal(insuranceLimiter.blockDuration, 0)
  t.throws(() => { insuranceLimiter.blockDuration = 5 }, /does not block keys/, 'blocking is not supported, and says so')
  t.throws(() => { insuranceLimiter.execEvenly = true }, /does not spread points/)
})
