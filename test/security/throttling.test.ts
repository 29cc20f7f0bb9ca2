import t from 'tap'
import { securedApp, exampleSecurity, call, basic, login, passwords, tokens, sessionCookie } from './app.js'
import type { SecurityCollected } from '../../src/security/index.js'
import { clientKey } from '../../src/security/client-key.js'
import { ManualClock } from '../clock.js'

const A = '203.0.113.1'
const B = '203.0.113.2'

/** A Basic request to /admin from `ip`. */
function admin (app: Parameters<typeof call>[0], ip: string, username: string, password: string, accept = 'text/html') {
  return call(app, { url: '/admin', remoteAddress: ip, headers: { authorization: basic(username, password), accept } })
}

t.test('HTTP Basic: 5 failed logins per user name and client, then 429 with Retry-After through the error page', async (t) => {
  const app = await securedApp()
  t.teardown(() => app.close())
  for (let i = 1; i <= 5; i++) t.equal((await admin(app, A, 'admin', `wrong-${i}`)).res.statusCode, 401, `failure ${i}: checked, 401`)

  const refused = await admin(app, A, 'admin', passwords.admin)
  t.equal(refused.res.statusCode, 429, 'the right password is refused too: it is not checked while the limit holds')
  const retryAfter = Number(refused.res.headers['retry-after'])
  t.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter} s, within the minute`)
  t.match(refused.res.body, '<title>Too many failed login attempts, please try again in 1 minute. (429 Too Many Requests)</title>')
  t.match(refused.res.body, 'TooManyRequestsHttpException')
  t.match(refused.res.body, 'TooManyLoginAttemptsAuthenticationException', 'Symfony\'s exception is the cause')
  t.equal(refused.res.headers['www-authenticate'], undefined, 'no challenge: retrying now is pointless')
  t.equal(refused.res.headers['x-robots-tag'], 'noindex', 'kernel.response ran')
  const security = refused.collected.security as SecurityCollected
  t.equal(security.decision, 'unauthenticated')
  t.equal(security.reason, 'Too many failed login attempts, please try again in 1 minute.')

  const json = await admin(app, A, 'admin', 'again', 'application/json')
  t.equal(json.res.statusCode, 429)
  t.equal(json.res.json().detail, 'Too many failed login attempts, please try again in 1 minute.')
  t.equal(json.res.json().class, 'TooManyRequestsHttpException')

  t.equal((await admin(app, A, 'ADMIN', 'x')).res.statusCode, 429, 'user names are compared lower-cased, as in Symfony')
  t.equal((await admin(app, B, 'admin', passwords.admin)).res.statusCode, 200, 'another client is not locked out')
  t.equal((await admin(app, A, 'user', passwords.user)).res.statusCode, 403, 'another user from the same client: checked (403: not an admin)')
})

t.test('production: the short 429 page, Retry-After kept', async (t) => {
  const app = await securedApp({ debug: false, security: await exampleSecurity({}, { loginThrottling: { maxAttempts: 1 } }) })
  t.teardown(() => app.close())
  t.equal((await admin(app, A, 'admin', 'wrong')).res.statusCode, 401)
  const { res } = await admin(app, A, 'admin', 'wrong')
  t.equal(res.statusCode, 429)
  t.match(res.body, 'The server returned a "429 Too Many Requests".')
  t.notMatch(res.body, 'Too many failed')
  t.ok(Number(res.headers['retry-after']) >= 1)
})

t.test('only failures count; a client has five times the per-user limit over all user names', async (t) => {
  const app = await securedApp({ security: await exampleSecurity({}, { loginThrottling: { maxAttempts: 2 } }) })
  t.teardown(() => app.close())
  t.equal((await admin(app, A, 'admin', 'wrong')).res.statusCode, 401)
  for (let i = 0; i < 12; i++) t.equal((await admin(app, A, 'admin', passwords.admin)).res.statusCode, 200, `success ${i + 1} is not counted`)
  t.equal((await admin(app, A, 'admin', 'wrong')).res.statusCode, 401, 'the second failure is still allowed')
  t.equal((await admin(app, A, 'admin', 'wrong')).res.statusCode, 429)
  // per client: 5 × 2 = 10 failures, whatever the user names (one already counted above... twice)
  let failures = 2
  for (let i = 0; failures < 10; i++, failures++) t.equal((await admin(app, A, `someone-${i}`, 'x')).res.statusCode, 401)
  const overClient = await admin(app, A, 'user', passwords.user)
  t.equal(overClient.res.statusCode, 429, 'the client\'s own limit: every user name is refused')
  t.equal((await admin(app, B, 'user', passwords.user)).res.statusCode, 403, 'other clients are not affected')
})

t.test('the window ends: attempts are accepted again', async (t) => {
  const clock = new ManualClock()
  const app = await securedApp({ clock, security: await exampleSecurity({}, { loginThrottling: { maxAttempts: 1, interval: 1 } }) })
  t.teardown(() => app.close())
  t.equal((await admin(app, A, 'admin', 'wrong')).res.statusCode, 401)
  const refused = await admin(app, A, 'admin', passwords.admin)
  t.equal(refused.res.statusCode, 429)
  t.equal(refused.res.headers['retry-after'], '1')
  clock.advance(1001)
  t.equal((await admin(app, A, 'admin', passwords.admin)).res.statusCode, 200)
})

t.test('the window is timed by the kernel\'s clock: it ends exactly when the clock passes its interval, whatever the real time', async (t) => {
  const clock = new ManualClock()
  const app = await securedApp({ clock, security: await exampleSecurity({}, { loginThrottling: { maxAttempts: 2, interval: 60 } }) })
  t.teardown(() => app.close())
  t.equal((await admin(app, A, 'admin', 'wrong-1')).res.statusCode, 401, 'the first failure opens the window')
  clock.advance(30_000)
  t.equal((await admin(app, A, 'admin', 'wrong-2')).res.statusCode, 401, 'the second, 30 s later, counts in the same window')
  t.equal((await admin(app, A, 'admin', passwords.admin)).res.headers['retry-after'], '30', 'Retry-After: what is left of the window')
  clock.advance(29_000)
  const last = await admin(app, A, 'admin', passwords.admin)
  t.equal(last.res.statusCode, 429, 'one second before its end: still refused')
  t.equal(last.res.headers['retry-after'], '1')
  clock.advance(1000)
  t.equal((await admin(app, A, 'admin', passwords.admin)).res.statusCode, 429, 'at its very end: still refused')
  clock.advance(1)
  t.equal((await admin(app, A, 'admin', passwords.admin)).res.statusCode, 200, 'once the clock has passed it: accepted, the first failure\'s window is over')
  t.equal((await admin(app, A, 'admin', 'wrong-3')).res.statusCode, 401, 'a new window starts with the next failure')
  t.equal((await admin(app, A, 'admin', 'wrong-4')).res.statusCode, 401)
  t.equal((await admin(app, A, 'admin', 'wrong-5')).res.statusCode, 429, 'and counts from zero')
})

t.test('a burst of concurrent guesses cannot overrun the limit', async (t) => {
  const checked: string[] = []
  const users = (await exampleSecurity()).users!
  const app = await securedApp({
    security: {
      ...(await exampleSecurity()),
      users: undefined,
      // the provider is asked once per password check
      provider: { loadUser: (name) => { checked.push(name); return users[name] === undefined ? null : { username: name, password: users[name].password, roles: users[name].roles ?? [] } } },
      passwordChecks: { concurrency: 4, queue: 64, perClient: 64 }
    }
  })
  t.teardown(() => app.close())
  const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => admin(app, A, 'admin', `guess-${i}`)))
  const statuses = answers.map(({ res }) => res.statusCode)
  t.equal(statuses.filter((s) => s === 401).length, 5, 'exactly five guesses were checked')
  t.equal(statuses.filter((s) => s === 429).length, 25)
  t.equal(checked.length, 5, 'the provider saw five checks')
})

t.test('guesses refused by the password-check gate count for the client (a flood spends its own budget), not for the user name', async (t) => {
  let release!: () => void
  const held = new Promise<void>((resolve) => { release = resolve })
  let entered!: () => void
  const checking = new Promise<void>((resolve) => { entered = resolve })
  const app = await securedApp({
    security: {
      ...(await exampleSecurity({}, { loginThrottling: { maxAttempts: 1 } })),
      users: undefined,
      provider: { loadUser: async () => { entered(); await held; return null } },
      passwordChecks: { concurrency: 1, queue: 10, perClient: 1 }
    }
  })
  t.teardown(() => app.close())
  // plain inject: call() pairs requests with their contexts in order, and the first one is held
  const guess = (ip: string, username: string) => app.inject({ url: '/admin', remoteAddress: ip, headers: { host: 'example.test', accept: 'application/json', authorization: basic(username, 'x') } })
  const first = guess(A, 'u0')
  await checking
  t.equal(app.kernelSecurity!.passwordChecks.active, 1, 'the first guess holds the gate')
  for (let i = 1; i <= 4; i++) {
    const res = await guess(A, `u${i}`)
    t.equal(res.statusCode, 429, `guess ${i}: the client already has a check running`)
    t.equal(res.json().detail, 'Too many password checks from this client at once, please try again.')
  }
  const sixth = await guess(A, 'u5')
  t.equal(sixth.json().detail, 'Too many failed login attempts, please try again in 1 minute.', 'the client\'s budget (5) is spent')
  release()
  t.equal((await first).statusCode, 401)
  t.equal((await guess(B, 'u1')).statusCode, 401, 'other clients, the same user names: checked')
})

t.test('form login: the sixth failure gets 429 instead of the redirect; no session is created for it', async (t) => {
  const app = await securedApp()
  t.teardown(() => app.close())
  for (let i = 1; i <= 5; i++) {
    const { res } = await login(app, 'admin', `wrong-${i}`, undefined, { remoteAddress: A })
    t.equal(res.headers.location, '/login?error=1', `failure ${i}`)
  }
  const { res } = await login(app, 'admin', passwords.admin, undefined, { remoteAddress: A })
  t.equal(res.statusCode, 429)
  t.ok(Number(res.headers['retry-after']) >= 1)
  t.match(res.body, 'Too many failed login attempts')
  t.equal(sessionCookie(res), null, 'no logged-in session')
  const other = await login(app, 'admin', passwords.admin, undefined, { remoteAddress: B })
  t.equal(other.res.headers.location, '/', 'another client logs in')
})

t.test('Bearer: wrong tokens are counted per client (five times the limit), then even the right token waits', async (t) => {
  const app = await securedApp({ security: await exampleSecurity({}, { loginThrottling: { maxAttempts: 1 } }) })
  t.teardown(() => app.close())
  const api = (ip: string, token: string) => call(app, { url: '/api/me', remoteAddress: ip, headers: { authorization: `Bearer ${token}` } })
  for (let i = 0; i < 5; i++) t.equal((await api(A, `wrong-token-${i}`)).res.statusCode, 401)
  const refused = await api(A, tokens.admin)
  t.equal(refused.res.statusCode, 429)
  t.ok(Number(refused.res.headers['retry-after']) >= 1)
  t.equal((await api(B, tokens.admin)).res.statusCode, 200)
  t.equal((await api(A, 'malformed token')).res.statusCode, 401, 'a malformed token is refused before any check: not counted, not throttled')
})

t.test('IPv6 clients are counted by /64; IPv4-mapped addresses as IPv4', async (t) => {
  t.equal(clientKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64')
  t.equal(clientKey('::ffff:198.51.100.7'), '198.51.100.7')
  t.equal(clientKey(undefined), 'unknown')
  t.equal(clientKey('not an address'), 'unknown')
  const app = await securedApp({ security: await exampleSecurity({}, { loginThrottling: { maxAttempts: 2 } }) })
  t.teardown(() => app.close())
  t.equal((await admin(app, '2001:db8:0:0::1', 'admin', 'x')).res.statusCode, 401)
  t.equal((await admin(app, '2001:db8:0:0::2', 'admin', 'x')).res.statusCode, 401)
  t.equal((await admin(app, '2001:db8:0:0:ffff::3', 'admin', passwords.admin)).res.statusCode, 429, 'another address of the same /64')
  t.equal((await admin(app, '2001:db8:0:1::1', 'admin', passwords.admin)).res.statusCode, 200, 'another /64')
})

t.test('loginThrottling: false turns it off; options are validated', async (t) => {
  const app = await securedApp({ security: await exampleSecurity({}, { loginThrottling: false }) })
  t.teardown(() => app.close())
  for (let i = 0; i < 8; i++) t.equal((await admin(app, A, 'admin', 'wrong')).res.statusCode, 401)
  t.equal((await admin(app, A, 'admin', passwords.admin)).res.statusCode, 200)
  await t.rejects(securedApp({ security: await exampleSecurity({}, { loginThrottling: { maxAttempts: 0, interval: 1.5 } }) }), {
    code: 'KERNEL_INVALID_OPTIONS',
    message: /"security\.firewalls\[0\]\.loginThrottling\.maxAttempts" must be >= 1; option "security\.firewalls\[0\]\.loginThrottling\.interval" must be integer/
  })
  await t.rejects(securedApp({ security: await exampleSecurity({ passwordChecks: { concurrency: 0 }, loginThrottlingStore: { redis: {} } as never }) }), {
    message: /"security\.loginThrottlingStore\.redis\.client" is required; option "security\.passwordChecks\.concurrency" must be >= 1/
  })
})
