/**
 * The demo page (/demo): a real HTTP call, Redis when REDIS_URL is set, SQL when DATABASE_URL is,
 * a template with a layout, a dump and the stopwatch, each seen in the page's profile.
 */
import t from 'tap'
import type { Test } from 'tap'
import { createServer } from 'node:net'
import { once } from 'node:events'
import type { FastifyInstance } from 'fastify'
import { loadServiceEnv } from '../src/env.js'
import { buildService } from '../src/build-service.js'
import { TestRedis } from '../../test/redis/server.js'
import { TestMariaDb } from '../../test/mariadb/server.js'

async function service (t: Test, env: Record<string, string>): Promise<FastifyInstance> {
  const app = await buildService(loadServiceEnv({ APP_ENV: 'test', APP_DEBUG: 'true', PROFILER_STORAGE: 'memory', ...env }, false), { logger: false })
  t.teardown(() => app.close())
  return app
}

/** A port nothing listens on: a database that is down. */
async function closedPort (): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as { port: number }).port
  await new Promise((resolve) => server.close(resolve))
  return port
}

t.test('without Redis and a database: the quote fetched, the template, the dump and the stopwatch in the profile', async (t) => {
  const app = await service(t, {})
  const res = await app.inject({ url: '/demo', headers: { host: 'localhost' } })
  t.equal(res.statusCode, 200)
  t.match(res.body, /“(Make it work|Premature|Measure)/, 'the quote comes from the other service')
  t.match(res.body, /fetched from <code>http:\/\/127\.0\.0\.1:\d+\/quotes\/today<\/code>/)
  t.match(res.body, 'no <code>REDIS_URL</code>: nothing to read')
  t.match(res.body, 'no <code>DATABASE_URL</code>: no statement')
  t.match(res.body, 'data-kwdt-snippet', 'the toolbar is injected (its snippet: the element naming the token)')

  const profile = await app.kernelProfiler!.profileOf(res)
  t.same(profile.collected.templates!.renders.map((r) => [r.template, r.layout]), [['demo.hbs', 'layout.hbs']])
  t.equal(profile.collected.dump!.dumps.length, 1)
  t.equal(profile.collected.dump!.dumps[0].label, 'the demo page\'s data')
  t.match(profile.collected.dump!.dumps[0].file, /demo-page\.ts$/, 'where the dump was called, mapped to the service\'s source')
  const rows = profile.collected.time!.timeline!.rows
  t.equal(rows.filter((r) => r.kind === 'app' && r.name === 'gather' && r.category === 'demo').length, 3, 'three stopwatch periods: quote, Redis, database')
  t.ok(rows.some((r) => r.kind === 'template' && r.name === 'demo.hbs'))
  const [call] = profile.collected.http_client!.calls
  t.match(call, { method: 'GET', status: 200 }, 'the fetch, in the HTTP Client panel')
  t.match(call.url, /^http:\/\/127\.0\.0\.1:\d+\/quotes\/today$/)
  t.ok(rows.some((r) => r.kind === 'http_client'), 'and on the timeline')
  t.equal(profile.collected.db!.statements.length, 0, 'no database: no statement')
})

t.test('with Redis: the page counts its visits there', async (t) => {
  const redis = await TestRedis.start(t)
  const app = await service(t, { REDIS_URL: redis.url })
  for (const expected of [1, 2]) {
    const res = await app.inject({ url: '/demo', headers: { host: 'localhost' } })
    t.equal(res.statusCode, 200)
    t.match(res.body, `this page was visited ${expected} times`)
  }
  t.equal(await redis.client(t).get('fastify-kernel:demo:visits'), '2')
  const res = await app.inject({ url: '/demo', headers: { host: 'localhost' } })
  const profile = await app.kernelProfiler!.profileOf(res)
  const commands = profile.collected.cache!.commands.filter((c) => c.kernel !== true).map((c) => `${c.command} ${c.keys.join(' ')}`)
  t.same(commands, ['INCR fastify-kernel:demo:visits', 'GET fastify-kernel:demo:visits'], 'its commands, in the Cache panel')
})

t.test('with MariaDB: the page asks it, its statements in the Database panel', async (t) => {
  const mariadb = await TestMariaDb.start(t)
  const app = await service(t, { DATABASE_URL: `mysql://${mariadb.user}@127.0.0.1:${mariadb.port}/${mariadb.database}` })
  const res = await app.inject({ url: '/demo', headers: { host: 'localhost' } })
  t.equal(res.statusCode, 200)
  t.match(res.body, /<dd>\d+\.\d+\.\d+-MariaDB[^,]*, 0 tables in the current schema<\/dd>/)
  const profile = await app.kernelProfiler!.profileOf(res)
  t.same(profile.collected.db!.statements.map((s) => s.statement), [
    'SELECT VERSION() AS version, DATABASE() AS name',
    'SELECT COUNT(*) AS tables FROM information_schema.tables WHERE table_schema = ?'
  ])
  t.same(profile.collected.db!.statements[1].params, ['test'])
})

t.test('a database that is down: the service starts, the page says so and still answers', async (t) => {
  const app = await service(t, { DATABASE_URL: `mysql://app:secret@127.0.0.1:${await closedPort()}/app` })
  const res = await app.inject({ url: '/demo', headers: { host: 'localhost' } })
  t.equal(res.statusCode, 200)
  t.match(res.body, /<span class="error">the database failed: [^<]*ECONNREFUSED/)
  t.notMatch(res.body, 'secret', 'the URL\'s password is nowhere on the page')
})

t.test('DATABASE_URL must be a MySQL or MariaDB URL', async (t) => {
  t.throws(() => loadServiceEnv({ DATABASE_URL: 'postgres://x@y/z' }, false), { message: /DATABASE_URL must be a mysql:\/\/ or mariadb:\/\/ URL/ })
  t.equal(loadServiceEnv({ DATABASE_URL: ' mariadb://app@db:3306/app ' }, false).DATABASE_URL, 'mariadb://app@db:3306/app')
  t.equal(loadServiceEnv({}, false).DATABASE_URL, null)
})
