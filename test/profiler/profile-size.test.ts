/**
 * A profile's size is bounded before it is written, on every storage (issue 36, finding 7): a
 * request that hands over a 100 MB value (a Redis SET through ioredis, a SQL value through pg, a
 * log field) gets its profile page, and the Redis storage stays available for the next ones; a
 * profile whose panels still hold more than MAX_PROFILE_BYTES (twenty mails)
 * is stored cut, marked, on the memory, file and Redis storages alike, and its page says so.
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { Redis } from 'ioredis'
import nodemailer from 'nodemailer'
import type { FastifyInstance } from 'fastify'
import { createKernelApp } from '../../index.js'
import type { KernelOptions } from '../../index.js'
import { page, profiled } from './helpers.js'
import { TestRedis } from '../redis/server.js'
import { TestPostgres } from '../postgres/server.js'
import { startSmtp } from '../mail/server.js'
import { MAX_PROFILE_BYTES } from '../../src/profiler/profile-bound.js'

const redisServer = await TestRedis.start(t)
const postgres = await TestPostgres.start(t)
const smtp = await startSmtp(t)
const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: smtp.port, ignoreTLS: true })
const pool = new pg.Pool({ connectionString: postgres.url, max: 2 })
// the server may stop (its teardown) while a client idles in the pool: not an error of the test
pool.on('error', () => {})
const appRedis = new Redis(redisServer.port, '127.0.0.1')
const storageRedis = new Redis(redisServer.port, '127.0.0.1')
t.teardown(async () => { await pool.end(); appRedis.disconnect(); storageRedis.disconnect(); mailer.close() })

const HUNDRED_MB = 100 * 1024 * 1024

const storages: Array<[string, () => KernelOptions['profiler']]> = [
  ['memory', () => ({ storage: 'memory', saveBudget: 1 })],
  ['file', () => {
    const directory = mkdtempSync(join(tmpdir(), 'kernel-profile-size-'))
    t.teardown(() => { rmSync(directory, { recursive: true, force: true }) })
    return { storage: 'file', directory, saveBudget: 1 }
  }],
  ['redis', () => ({ storage: 'redis', redis: { client: storageRedis, prefix: `size-${Math.random().toString(36).slice(2)}:`, commandTimeout: 500 }, saveBudget: 1 })]
]

async function appWith (profiler: KernelOptions['profiler']): Promise<FastifyInstance> {
  // the first app of the file loads the kernel's modules (TypeScript compiled on the way): slow on a loaded machine
  const app = await createKernelApp({ kernel: { debug: true, profiler }, fastify: { pluginTimeout: 120_000 } })
  app.get('/big', async (request) => {
    const value = 'v'.repeat(HUNDRED_MB)
    await appRedis.set('big', value)
    await pool.query('SELECT length($1::text) AS n', [value])
    request.log.info({ blob: value }, 'stored the blob')
    return 'stored'
  })
  // twenty mails of 1.4 MB: each kept with 256 KiB of its HTML and of its text, bounded one by one, 10 MB together
  app.get('/many-mails', async () => {
    for (let i = 0; i < 20; i++) await mailer.sendMail({ from: 'a@example.test', to: 'b@example.test', subject: `m${i}`, html: `<p>${String(i).padEnd(700_000, 'h')}</p>`, text: String(i).padEnd(700_000, 't') })
    return 'sent'
  })
  app.get('/small', async () => 'small')
  return app
}

for (const [kind, options] of storages) {
  t.test(`${kind} storage: a 100 MB value, then a profile of 10 MB`, async (t) => {
    const app = await appWith(options())
    t.teardown(() => app.close())
    const big = await profiled(app, { url: '/big' })
    t.equal(big.res.statusCode, 200)
    const bigPage = await page(app, `/_profiler/${big.token}?panel=cache`)
    t.equal(bigPage.statusCode, 200, 'its page answers')
    t.ok(bigPage.body.length < 1024 * 1024, `the value is shown cut: a page of ${bigPage.body.length} characters`)
    t.ok(JSON.stringify(big.profile).length < MAX_PROFILE_BYTES, `the stored profile is small: ${JSON.stringify(big.profile).length} bytes`)
    const next = await profiled(app, { url: '/small' })
    t.equal((await page(app, `/_profiler/${next.token}`)).statusCode, 200, 'the storage is available for the next profile')

    const huge = await profiled(app, { url: '/many-mails' })
    const size = JSON.stringify(huge.profile).length
    t.ok(size <= MAX_PROFILE_BYTES, `stored within ${MAX_PROFILE_BYTES} bytes: ${size}`)
    // the memory storage cuts what a unit holds as it keeps it (a quarter of maxMemory); the others cut the profile they write
    t.match(huge.profile.cut, kind === 'memory' ? /^This unit held \d+\.\d MB, more than a quarter of the memory storage's maxMemory: its large values .* were cut/ : /^This profile took 10\.\d MB, over the 8\.0 MB a profile may take: its long values were cut/, 'the profile says it was cut')
    t.match(huge.profile.collected.mail?.messages[0]?.html, /… \[cut by the profiler: \d+ more characters\]$/, 'each cut value is marked')
    const hugePage = await page(app, `/_profiler/${huge.token}?panel=mail`)
    t.equal(hugePage.statusCode, 200)
    t.match(hugePage.body, /<div class="facts" id="profile-cut"><span class="status status-warning">cut<\/span> This (profile took 10|unit held \d+)\.\d MB/, 'its page says so')
  })
}
