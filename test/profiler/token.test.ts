import t from 'tap'
import { TOKEN_PATTERN } from '../../src/profiler/token.js'
import { LocalTokens } from '../../src/profiler/storage/storage.js'
import { profilerOf, buildApp } from '../helpers.js'
import { host } from './helpers.js'

t.test('local tokens: six lower-case hex characters, unique by construction, skipping stored ones', async (t) => {
  const stored = new Set<string>()
  const tokens = new LocalTokens((token) => stored.has(token))
  const first = tokens.reserve()
  t.match(first, TOKEN_PATTERN)
  const seen = new Set([first])
  // a sequence: no draw is ever checked against the tokens in flight, none repeats
  for (let i = 0; i < 100_000; i++) seen.add(tokens.reserve())
  t.equal(seen.size, 100_001, '100,001 draws, 100,001 tokens')
  t.ok([...seen].every((token) => TOKEN_PATTERN.test(token)))
  // what an earlier process stored in the same folder is skipped
  const next = new LocalTokens((token) => stored.has(token))
  const probe = new LocalTokens(() => false)
  Object.assign(probe, { next: 5 })
  Object.assign(next, { next: 5 })
  const taken = [probe.reserve(), probe.reserve(), probe.reserve()]
  t.same(taken, ['000005', '000006', '000007'], 'consecutive from where the sequence stands')
  stored.add('000005').add('000006')
  t.equal(next.reserve(), '000007', 'stored tokens are skipped')
  // the sequence wraps at the last token
  Object.assign(probe, { next: 0xffffff })
  t.same([probe.reserve(), probe.reserve()], ['ffffff', '000000'])
})

t.test('every request gets its own token, unique among stored and in-flight profiles', async (t) => {
  // saveBudget 1: a slow machine must not drop profiles this test counts
  const app = await buildApp({ debug: true, profiler: { saveBudget: 1 } })
  t.teardown(() => app.close())
  const responses = await Promise.all(Array.from({ length: 200 }, (_, i) => app.inject({ url: `/hello/${i}`, headers: { host } })))
  const tokens = new Set(responses.map((res) => res.headers['x-debug-token']))
  t.equal(tokens.size, 200)
  await app.kernelProfiler!.settled()
  t.equal(profilerOf(app).storage.size, 200)
})
