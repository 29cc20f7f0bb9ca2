/**
 * The Cache panel against a real redis-server, with ioredis 6 and node-redis: the app's commands,
 * and the kernel's own (sessions, login throttling, profile storage) shown apart.
 */
import t from 'tap'
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { createKernelApp } from '../../../index.js'
import { flaggedPanels, page, profiled } from '../helpers.js'
import { TestRedis } from '../../redis/server.js'
import { IdleExpiryRedisStore } from '../../../service/src/redis.js'
import { securedApp, exampleSecurity, basic, SECRET } from '../../security/app.js'

const redis = await TestRedis.start(t)

async function ioredis (t: { teardown: (fn: () => unknown) => void }): Promise<Redis> {
  const client = new Redis(redis.port, '127.0.0.1', { lazyConnect: true })
  await client.connect()
  t.teardown(() => { client.disconnect() })
  return client
}

t.test('a user with only ioredis sees their commands: keys, arguments as the client masks them, time, failures', async (t) => {
  const client = await ioredis(t)
  // nothing but the kernel, registered as the README says
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/cart', async () => {
    await client.set('cart:7', 'secret-value', 'EX', 60)
    const value = await client.get('cart:7')
    await client.mget('cart:7', 'cart:8')
    await client.pipeline().incr('visits').expire('visits', 60).exec()
    await client.incr('cart:7').catch(() => undefined)
    return { value }
  })
  t.teardown(() => app.close())
  const { profile, res, token } = await profiled(app, { url: '/cart' })
  t.same(res.json(), { value: 'secret-value' })
  const commands = profile.collected.cache!.commands
  t.same(commands.map((c) => [c.command, c.keys]), [
    ['SET', ['cart:7']], ['GET', ['cart:7']], ['MGET', []], ['INCR', ['visits']], ['EXPIRE', ['visits']], ['INCR', ['cart:7']]
  ], 'every command with its keys, a pipeline\'s one by one')
  t.same(commands[0].args, ['cart:7', '?', '?', '?'], 'a written value is masked by ioredis itself')
  t.same(commands[2].args, ['?', '?'], 'and what it does not know to be safe (MGET\'s keys): the panel shows what the client publishes')
  t.match(commands[5].error, /not an integer/, 'the failure')
  for (const command of commands) {
    t.equal(command.client, 'ioredis')
    t.type(command.duration, 'number')
    t.notOk(command.kernel)
  }
  t.notMatch(JSON.stringify(profile.collected.cache), 'secret-value')

  const panel = await page(app, `/_profiler/${token}?panel=cache`)
  t.match(panel.body, /<table id="cache-commands">[\s\S]*?<td class="mono">SET/)
  t.match(panel.body, /data-panel="cache" class="active"><span>Cache<\/span><span class="badge badge-error">1<\/span>/)
  t.notMatch(panel.body, 'The kernel\'s own commands', 'no kernel traffic here')
  const toolbar = await page(app, `/_wdt/${token}`)
  t.match(toolbar.body, /data-kwdt="cache">[\s\S]*?kwdt-badge kwdt-badge-error" data-kwdt-count>6</, 'the toolbar item: 6 commands, one failed')
})

t.test('node-redis: commands, and a transaction as one MULTI', async (t) => {
  const client = createClient({ url: redis.url })
  client.on('error', () => undefined)
  await client.connect()
  t.teardown(async () => { await client.quit() })
  const app = await createKernelApp({ kernel: { debug: true, profiler: { thresholds: { cache: 0 } } } })
  app.get('/node-redis', async () => {
    await client.set('greeting', 'hello')
    await client.get('greeting')
    await client.multi().incr('counter').get('counter').exec()
    return 'ok'
  })
  t.teardown(() => app.close())
  const { profile, token } = await profiled(app, { url: '/node-redis' })
  const commands = profile.collected.cache!.commands
  t.same(commands.map((c) => [c.command, c.keys, c.client]), [
    ['SET', ['greeting'], 'node-redis'], ['GET', ['greeting'], 'node-redis'], ['MULTI', [], 'node-redis']
  ])
  t.same(commands[0].args, ['greeting', '?'], 'node-redis masks written values too')
  t.same(commands[2].args, ['2 commands'])
  const toolbar = await page(app, `/_wdt/${token}`)
  t.match(toolbar.body, /data-kwdt="cache">[\s\S]*?kwdt-badge kwdt-badge-warning" data-kwdt-count>3</, 'above the cache threshold')
})

t.test('hits and misses: a read that found nothing is a miss (per key for MGET and HMGET), the hit ratio on the toolbar; both clients', async (t) => {
  const client = await ioredis(t)
  const other = createClient({ url: redis.url })
  other.on('error', () => undefined)
  await other.connect()
  t.teardown(async () => { await other.quit() })
  await client.set('hit:1', 'v')
  await client.hset('hit:hash', 'f', 'v')
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/reads', async () => {
    await client.get('hit:1') // hit
    await client.get('miss:1') // miss
    await client.mget('hit:1', 'miss:2', 'miss:3') // 1 hit, 2 misses
    await client.hgetall('miss:hash') // {}: miss
    await client.exists('hit:1', 'miss:4') // 1 hit, 1 miss
    await client.set('write', 'x') // neither
    await other.hGetAll('hit:hash') // hit
    await other.hmGet('hit:hash', ['f', 'nope']) // 1 hit, 1 miss
    await other.get('miss:5') // miss
    return 'ok'
  })
  t.teardown(() => app.close())
  const { profile, token } = await profiled(app, { url: '/reads' })
  const commands = profile.collected.cache!.commands
  t.same(commands.map((c) => [c.command, c.hits, c.misses]), [
    ['GET', 1, 0], ['GET', 0, 1], ['MGET', 1, 2], ['HGETALL', 0, 1], ['EXISTS', 1, 1], ['SET', undefined, undefined],
    ['HGETALL', 1, 0], ['HMGET', 1, 1], ['GET', 0, 1]
  ], 'each read with its hits and misses; a write is neither')
  const panel = (await page(app, `/_profiler/${token}?panel=cache`)).body
  t.match(panel, /data-hits>5</)
  t.match(panel, /data-misses>7</)
  t.match(panel, /data-hit-ratio>42 %</, '5 of 12 found')
  t.match(panel, /<tr class="" data-command="2">[\s\S]*?<span class="flag flag-miss" data-read>miss<\/span>/)
  t.match(panel, /<tr class="" data-command="3">[\s\S]*?<span class="flag flag-hit" data-read>1 hit, 2 misses<\/span>/)
  const toolbar = (await page(app, `/_wdt/${token}`)).body
  t.match(toolbar, /data-kwdt="cache">[\s\S]*?<span class="kwdt-label kwdt-detail" data-kwdt-hit-ratio title="hit ratio of the reads">42 % hits<\/span>/, 'the hit ratio on the toolbar item')
  t.match(toolbar, /<tr><th>Reads<\/th><td>8: 5 hits, 7 misses<\/td><\/tr>/)
})

t.test('the same command shape 3 times or more (ids taken out of the keys) is a likely N+1: panel, badge, toolbar', async (t) => {
  const client = await ioredis(t)
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/books', async () => {
    for (const id of [1, 2, 3]) await client.get(`book:${id}:title`)
    await client.get('book:1:title')
    await client.get('config')
    await client.get('config')
    return 'ok'
  })
  app.get('/fine', async () => {
    await client.get('book:1:title')
    await client.get('book:2:title')
    return 'ok'
  })
  t.teardown(() => app.close())
  const { profile, token } = await profiled(app, { url: '/books' })
  t.same(flaggedPanels(profile, 'nPlusOne'), ['cache'], 'the profile\'s summary says so (the Cache panel\'s figure), for the search page')
  const panel = (await page(app, `/_profiler/${token}?panel=cache`)).body
  t.match(panel, /<table id="cache-n-plus-one">[\s\S]*?<tr class="row-warning"><td>4<\/td><td>3<\/td><td class="mono num">[\d.]+<\/td><td class="mono">GET book:\{id\}:title<\/td><\/tr>/, 'the shape, its count and its different keys')
  t.notMatch(panel, /GET config<\/td><\/tr>/, 'twice is no N+1')
  t.match(panel, /data-panel="cache" class="active"><span>Cache<\/span><span class="badge badge-warning">6 \(N\+1\)<\/span>/)
  t.match(panel, /data-command="1">[\s\S]*?likely N\+1: 4 of this shape/)
  const toolbar = (await page(app, `/_wdt/${token}`)).body
  t.match(toolbar, /data-kwdt="cache">[\s\S]*?kwdt-badge kwdt-badge-warning" data-kwdt-count>6<[\s\S]*?data-kwdt-n-plus-one>1</)
  const fine = await profiled(app, { url: '/fine' })
  t.same(flaggedPanels(fine.profile, 'nPlusOne'), [])
})

t.test('the kernel\'s own traffic (sessions, login throttling) is shown apart and not counted; the session id is masked', async (t) => {
  const client = await ioredis(t)
  const app = await securedApp({
    session: { secret: SECRET, ttl: 600, store: new IdleExpiryRedisStore(client, 600) },
    security: await exampleSecurity({ loginThrottlingStore: { redis: { client, prefix: 'test:login:' } } })
  }, (app) => {
    app.get('/visit', async (request) => {
      request.session.set('visits', ((request.session.get('visits') as number | undefined) ?? 0) + 1)
      await client.get('app:key')
      return 'ok'
    })
  })
  // the first visit creates the session (written at the response), the second reads it
  const first = await profiled(app, { url: '/visit' })
  const cookie = String(first.res.headers['set-cookie']).split(';')[0]!
  const sessionId = decodeURIComponent(cookie.split('=')[1]!).split('.')[0]!
  const second = await profiled(app, { url: '/visit', headers: { cookie } })
  const commands = second.profile.collected.cache!.commands
  const app_ = commands.filter((c) => c.kernel !== true)
  const kernel = commands.filter((c) => c.kernel === true)
  t.same(app_.map((c) => [c.command, c.keys]), [['GET', ['app:key']]], 'the app\'s command')
  // @fastify/session reads the session before kernel.request, where the profile starts: the read is in no profile
  t.notOk(commands.some((c) => c.command === 'GETEX'), 'the session read comes before the profile')
  const write = kernel.find((c) => c.command === 'SET')!
  t.equal(write.purpose, 'session', 'the session written at the response, the kernel\'s')
  t.same(write.keys, ['fastify-kernel:session:******'], 'the session id masked in its key')
  t.notMatch(JSON.stringify(second.profile.collected.cache), sessionId)
  t.ok(first.profile.collected.cache!.commands.some((c) => c.command === 'SET' && c.purpose === 'session'), 'the session written at the response')

  // a failed login counts the attempt in Redis
  const failed = await profiled(app, { url: '/profile', headers: { authorization: basic('admin', 'wrong') } })
  t.equal(failed.res.statusCode, 401)
  const throttling = failed.profile.collected.cache!.commands.filter((c) => c.purpose === 'login throttling')
  t.ok(throttling.length > 0, 'the login throttling counters, the kernel\'s')
  t.ok(throttling.every((c) => c.kernel === true && c.keys.every((key) => key.startsWith('test:login:'))))

  const panel = await page(app, `/_profiler/${second.token}?panel=cache`)
  t.match(panel.body, /<table id="cache-commands">[\s\S]*?app:key/)
  t.match(panel.body, /The kernel's own commands[\s\S]*?<table id="cache-kernel-commands">[\s\S]*?SET[\s\S]*?<span class="flag flag-info">session<\/span>/)
  t.match(panel.body, /data-panel="cache" class="active"><span>Cache<\/span><span class="badge badge-info">1<\/span>/, 'the badge counts the app\'s')
  const toolbar = await page(app, `/_wdt/${second.token}`)
  t.match(toolbar.body, /data-kwdt="cache">[\s\S]*?data-kwdt-count>1</, 'so does the toolbar')
  t.match(toolbar.body, /The kernel's own<\/th><td>\d+ \(not counted\)/)
})

t.test('the profile storage\'s commands during requests never count as the app\'s', async (t) => {
  const client = await ioredis(t)
  const app = await createKernelApp({ kernel: { debug: true, profiler: { storage: 'redis', redis: { client, prefix: 'test:profiler:' } } } })
  app.get('/x', async () => { await client.get('app:x'); return 'x' })
  t.teardown(() => app.close())
  // enough requests to draw the pool of token reservations down and refill it during one of
  // them (the refill's commands are sent before that request's recording starts, and saves
  // after its spans are closed; any that fell in between would be marked as the kernel's)
  const counted: string[] = []
  const kernel = new Set<string>()
  for (let i = 0; i < 180; i++) {
    const { profile } = await profiled(app, { url: '/x' })
    for (const command of profile.collected.cache!.commands) {
      if (command.kernel === true) kernel.add(command.purpose!)
      else counted.push(command.keys.join(' '))
    }
  }
  t.same(counted, Array(180).fill('app:x'), 'each request counts its own command, and only it')
  t.ok([...kernel].every((purpose) => purpose === 'profile storage'))
})

t.test('a hostile key is escaped', async (t) => {
  const client = await ioredis(t)
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/hostile', async () => { await client.get('<script>alert(1)</script>'); return 'ok' })
  t.teardown(() => app.close())
  const { token, profile } = await profiled(app, { url: '/hostile' })
  t.same(profile.collected.cache!.commands[0].keys, ['<script>alert(1)</script>'])
  const panel = await page(app, `/_profiler/${token}?panel=cache`)
  t.notMatch(panel.body, '<script>alert(1)')
  t.match(panel.body, '&lt;script&gt;alert(1)&lt;/script&gt;')
})

t.test('30 concurrent requests, each with its own ioredis and node-redis commands, get exactly their own', async (t) => {
  const client = await ioredis(t)
  const other = createClient({ url: redis.url })
  other.on('error', () => undefined)
  await other.connect()
  t.teardown(async () => { await other.quit() })
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/mine/:id', async (request) => {
    const id = (request.params as { id: string }).id
    await client.get(`io:${id}`)
    await other.get(`node:${id}`)
    return id
  })
  t.teardown(() => app.close())
  const ids = Array.from({ length: 30 }, (_value, index) => index)
  const results = await Promise.all(ids.map((id) => profiled(app, { url: `/mine/${id}` })))
  for (const [index, { profile }] of results.entries()) {
    t.same(profile.collected.cache!.commands.map((c) => c.keys[0]), [`io:${index}`, `node:${index}`], `request ${index}: its own commands`)
  }
})

t.test('a script\'s values are masked, its keys shown: they carry whatever the caller passes (a queue\'s job data)', async (t) => {
  const client = await ioredis(t)
  const app = await createKernelApp({ kernel: { debug: true } })
  app.get('/script', async () => {
    await client.eval('return redis.call("SET", KEYS[1], ARGV[1])', 1, 'job:1', '{"password":"hunter2"}')
    await client.call('EVAL', 'return 1', '0', 'api-key-value')
    return 'ok'
  })
  t.teardown(() => app.close())
  const { profile } = await profiled(app, { url: '/script' })
  const [withKey, withoutKey] = profile.collected.cache!.commands
  t.same(withKey!.keys, ['job:1'])
  t.same(withKey!.args.slice(1), ['1', 'job:1', '?'], 'the value is masked')
  t.same(withoutKey!.args.slice(1), ['0', '?'])
  t.notMatch(JSON.stringify(profile), /hunter2|api-key-value/)
})
