import t from 'tap'
import { buildOnce } from '../../test/build-once.js'
import { TestRedis } from '../../test/redis/server.js'
import { spawnService, startService } from './process.js'
import { once } from 'node:events'

// the services run from the compiled output, as `npm start` does
buildOnce()

const SECRET = 'a-shared-session-secret-of-40-characters'

/** The login form of a service (its session cookie and CSRF token), then the form posted. */
async function logIn (base: string): Promise<Response> {
  const form = await fetch(`${base}/login`)
  const token = /name="_csrf_token" value="([^"]+)"/.exec(await form.text())?.[1]
  if (token === undefined) throw new Error('the login form has no CSRF token')
  return await fetch(`${base}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieOf(form) },
    body: `_username=admin&_password=admin&_csrf_token=${encodeURIComponent(token)}`
  })
}

function cookieOf (res: Response): string {
  const header = res.headers.getSetCookie().find((c) => c.startsWith('sessionId='))
  if (header === undefined) throw new Error(`no session cookie (${res.status})`)
  return header.split(';')[0]
}

t.test('two service processes sharing one Redis: sessions and profiles cross over; Redis stopped mid-run fails no request; restarted, saves resume', async (t) => {
  const redis = await TestRedis.start(t)
  const env = { REDIS_URL: redis.url, APP_DEBUG: 'true', APP_SESSION_SECRET: SECRET, LOG_LEVEL: 'info' }
  const [a, b] = await Promise.all([startService(t, env), startService(t, env)])

  for (const node of [a, b]) t.same(await (await fetch(`${node.base}/_health`)).json(), { status: 'ok', redis: 'ready' })

  // log in on A, the session works on B
  const login = await logIn(a.base)
  t.equal(login.status, 302)
  const cookie = cookieOf(login)
  const onB = await fetch(`${b.base}/admin`, { headers: { cookie } })
  t.equal(onB.status, 200, 'logged in on A, admin page on B')
  t.match(await onB.text(), 'Hello admin')

  // a request on A, its profile opens on B
  const req = await fetch(`${a.base}/hello/from-a`)
  const token = req.headers.get('x-debug-token')!
  t.match(token, /^[0-9a-f]{6}$/)
  // saved after the response: A's toolbar answers once it is stored
  t.equal((await fetch(`${a.base}/_wdt/${token}`)).status, 200)
  const page = await fetch(`${b.base}/_profiler/${token}`)
  t.equal(page.status, 200)
  t.match(await page.text(), '/hello/from-a', 'the profile of a request on A opens on B')

  // Redis goes away mid-run
  await redis.stop()
  const statuses: number[] = []
  for (let i = 0; i < 60; i++) {
    const node = i % 2 === 0 ? a : b
    statuses.push((await fetch(`${node.base}/hello/${i}`)).status)
    statuses.push((await fetch(`${node.base}/`, { headers: { cookie } })).status)
  }
  t.same([...new Set(statuses)], [200], '120 requests while Redis is down: every one 200')
  t.equal((await fetch(`${a.base}/admin`, { headers: { cookie } })).status, 401, 'the session cannot be read: anonymous, not a 500')
  t.same(await (await fetch(`${a.base}/_health`)).json(), { status: 'degraded', redis: 'down' })
  t.equal((await fetch(`${a.base}/_health?require=redis`)).status, 503)

  // back: everything resumes without a restart
  await redis.start()
  let resumed = false
  for (let i = 0; i < 100 && !resumed; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    const res = await fetch(`${a.base}/hello/after`)
    t.equal(res.status, 200)
    const drawn = res.headers.get('x-debug-token')
    if (drawn === null) continue
    await fetch(`${a.base}/_wdt/${drawn}`) // once stored (or failed)
    const opened = await fetch(`${b.base}/_profiler/${drawn}`)
    resumed = opened.status === 200 && (await opened.text()).includes('/hello/after')
  }
  t.ok(resumed, 'a profile saved by A after the restart opens on B')
  const search = await (await fetch(`${a.base}/_profiler/`)).text()
  const dropped = /id="dropped">(\d+) profiles were not stored/.exec(search)
  t.ok(dropped !== null && Number(dropped[1]) > 0, `the drops are counted on the search page (${dropped?.[1]})`, { page: /<title>[^<]*<\/title>/.exec(search)?.[0] })
  const relogin = await logIn(b.base)
  t.equal((await fetch(`${a.base}/admin`, { headers: { cookie: cookieOf(relogin) } })).status, 200, 'sessions work again (this Redis kept no data: a new login)')
})

t.test('REDIS_URL pointing nowhere: a clear message at start, exit 1', async (t) => {
  const { child, output } = spawnService({ REDIS_URL: 'redis://127.0.0.1:1', APP_SESSION_SECRET: SECRET })
  const [code] = await once(child, 'exit')
  t.equal(code, 1)
  t.match(output(), /cannot connect to Redis at redis:\/\/127\.0\.0\.1:1 \(REDIS_URL\)/)
  t.notMatch(output(), / {4}at /, 'no stack trace')
})
