import t from 'tap'
import { setImmediate as tick } from 'node:timers/promises'
import { PasswordCheckGate } from '../../src/security/password-check-gate.js'
import { ServiceUnavailableHttpException, TooManyRequestsHttpException } from '../../src/errors/exceptions.js'
import { securedApp, exampleSecurity, exampleUsers, basic, passwords } from './app.js'
import type { StoredUser } from '../../src/security/index.js'

/** A promise the test resolves when it wants. */
function latch (): { promise: Promise<void>, open: () => void } {
  let open!: () => void
  const promise = new Promise<void>((resolve) => { open = resolve })
  return { promise, open }
}

async function until (condition: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !condition(); i++) await tick()
  if (!condition()) throw new Error('condition never met')
}

t.test('the gate: at most `concurrency` running, `queue` waiting, `perClient` places per client', async (t) => {
  const gate = new PasswordCheckGate({ concurrency: 2, queue: 1, perClient: 2 })
  const hold = latch()
  let running = 0
  let most = 0
  const check = async (): Promise<string> => {
    running++
    most = Math.max(most, running)
    await hold.promise
    running--
    return 'checked'
  }
  const first = [gate.run('a', check), gate.run('b', check), gate.run('a', check)]
  await until(() => gate.active === 2)
  t.equal(gate.pending, 1)
  const refusal = await gate.run('c', check).catch((error: unknown) => error)
  t.type(refusal, ServiceUnavailableHttpException, 'the queue is full: 503')
  t.same((refusal as ServiceUnavailableHttpException).headers, { 'Retry-After': '1' })
  hold.open()
  t.same(await Promise.all(first), ['checked', 'checked', 'checked'])
  t.equal(most, 2, 'never more than two at once')

  const slow = latch()
  const own = [gate.run('a', async () => { await slow.promise; return 1 }), gate.run('a', async () => { await slow.promise; return 2 })]
  await t.rejects(gate.run('a', check), TooManyRequestsHttpException, 'a third place for the same client: 429')
  const other = gate.run('b', async () => 'other client')
  slow.open()
  t.equal(await other, 'other client', 'other clients still get in')
  t.same(await Promise.all(own), [1, 2])
  t.equal(await gate.run('a', async () => 'again'), 'again', 'places are given back')
  await t.rejects(gate.run('a', async () => { throw new Error('provider down') }), /provider down/)
  t.equal(gate.active + gate.pending, 0)
})

t.test('a flood of guesses from many clients: checks bounded, the overflow answered 503 at once, then everyone is answered', async (t) => {
  const users = await exampleUsers()
  const hold = latch()
  let loads = 0
  const app = await securedApp({
    security: {
      ...(await exampleSecurity({}, { loginThrottling: false })),
      users: undefined,
      // each check waits until the test lets it go: the gate's state can be seen mid-flood
      provider: {
        loadUser: async (name: string): Promise<StoredUser | null> => {
          loads++
          await hold.promise
          return users[name] === undefined ? null : { username: name, password: users[name].password, roles: users[name].roles ?? [] }
        }
      },
      passwordChecks: { concurrency: 2, queue: 3, perClient: 1 }
    }
  })
  t.teardown(() => app.close())
  const gate = app.kernelSecurity!.passwordChecks
  const guess = (i: number) => app.inject({ url: '/admin', remoteAddress: `198.51.100.${i}`, headers: { host: 'example.test', authorization: basic('admin', `guess-${i}`) } })
  const flood = Array.from({ length: 20 }, (_, i) => guess(i + 1))
  await until(() => gate.active === 2 && gate.pending === 3)
  const real = app.inject({ url: '/admin', remoteAddress: '192.0.2.1', headers: { host: 'example.test', authorization: basic('admin', passwords.admin) } })
  hold.open()
  const answers = await Promise.all(flood)
  const statuses = answers.map((res) => res.statusCode)
  t.equal(statuses.filter((s) => s === 401).length, 5, 'two running and three waiting were checked')
  t.equal(statuses.filter((s) => s === 503).length, 15, 'the rest were refused without a check')
  for (const res of answers.filter((r) => r.statusCode === 503)) {
    t.equal(res.headers['retry-after'], '1')
    t.match(res.body, 'Too many password checks in progress')
  }
  t.equal(loads, 5)
  const realAnswer = await real
  t.equal(realAnswer.statusCode, 503, 'a real login arriving while the queue is full is answered at once, not queued behind the flood')
  const later = await app.inject({ url: '/admin', remoteAddress: '192.0.2.1', headers: { host: 'example.test', authorization: basic('admin', passwords.admin) } })
  t.equal(later.statusCode, 200, 'and gets in once the flood is checked')
})

t.test('one client cannot fill the queue: its extra concurrent guesses get 429 at once', async (t) => {
  const hold = latch()
  const app = await securedApp({
    security: {
      ...(await exampleSecurity({}, { loginThrottling: false })),
      users: undefined,
      provider: { loadUser: async () => { await hold.promise; return null } },
      passwordChecks: { concurrency: 1, queue: 50, perClient: 2 }
    }
  })
  t.teardown(() => app.close())
  const gate = app.kernelSecurity!.passwordChecks
  const flood = Array.from({ length: 12 }, (_, i) => app.inject({ url: '/admin', remoteAddress: '198.51.100.9', headers: { host: 'example.test', authorization: basic('admin', `guess-${i}`) } }))
  await until(() => gate.active === 1 && gate.pending === 1)
  const other = app.inject({ url: '/admin', remoteAddress: '198.51.100.10', headers: { host: 'example.test', authorization: basic('admin', 'other') } })
  await until(() => gate.pending === 2)
  t.pass('another client queues behind it')
  hold.open()
  const statuses = (await Promise.all(flood)).map((res) => res.statusCode)
  t.equal(statuses.filter((s) => s === 401).length, 2, 'two guesses checked')
  t.equal(statuses.filter((s) => s === 429).length, 10, 'the ten others refused without a check')
  t.equal((await other).statusCode, 401)
})
