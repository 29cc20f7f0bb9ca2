import t from 'tap'
import { createToken, TOKEN_PATTERN } from '../../src/profiler/token.js'
import { profilerOf, buildApp } from '../helpers.js'
import { host } from './helpers.js'

t.test('tokens: six lower-case hex characters, redrawn while taken', async (t) => {
  const seen = new Set<string>()
  for (let i = 0; i < 2000; i++) {
    const token = createToken((candidate) => seen.has(candidate))
    t.match(token, /^[0-9a-f]{6}$/)
    t.notOk(seen.has(token))
    seen.add(token)
  }
  let asked = 0
  const token = createToken(() => ++asked < 5)
  t.equal(asked, 5, 'the first four draws were taken')
  t.match(token, TOKEN_PATTERN)
  t.throws(() => createToken(() => true), /no free profiler token/)
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
