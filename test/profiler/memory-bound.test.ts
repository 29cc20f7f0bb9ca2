/**
 * Memory is bounded in debug (issue 36, finding 2), whatever the app hands its libraries: 40
 * units each handing over a fresh 4 MB value — read through pg and through mysql2 (whose query()
 * writes it into the statement), sent in a mail with a 4 MB attachment through a real SMTP
 * server, added as a BullMQ job's data on a real redis-server — leave the process holding at
 * most `maxMemory` plus a stated slack, measured after a full GC in a child process run with
 * --expose-gc (test/profiler/fixtures/memory-load.ts): V8's heap and the buffers outside it.
 * Before the fix the review measured +161 MB (pg), +321 MB (mysql2), +360 MB (jobs), +240 MB (mail).
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { resolve } from 'node:path'
import { TestPostgres } from '../postgres/server.js'
import { TestMariaDb } from '../mariadb/server.js'
import { TestRedis } from '../redis/server.js'
import { startSmtp } from '../mail/server.js'
import { EXPLAIN_CACHE_BYTES } from '../../src/profiler/panels/db/explain.js'

// four child processes, each loading 160 MB through a real server
t.setTimeout(900_000)

const MAX_MEMORY = 32 * 1024 * 1024
/**
 * What else the process may hold after the loads: the EXPLAIN cache's own bound (8 MiB), and
 * 16 MiB for what the drivers, pools and V8 keep (connection buffers, compiled code, the last
 * request's garbage a GC leaves): the bound is `maxMemory` + this, not a measure of noise.
 */
const SLACK = EXPLAIN_CACHE_BYTES + 16 * 1024 * 1024

const postgres = await TestPostgres.start(t)
const mariadb = await TestMariaDb.start(t)
const redis = await TestRedis.start(t)
const smtp = await startSmtp(t)

const root = resolve(import.meta.dirname, '../..')
const fixture = resolve(import.meta.dirname, 'fixtures/memory-load.ts')

async function run (load: string): Promise<{ growth: number, stored: number, counted: number, explainCache: number }> {
  const env = { ...process.env, LOAD: load, MAX_MEMORY: String(MAX_MEMORY), PG_URL: postgres.url, MARIADB: JSON.stringify(mariadb.connection), REDIS_PORT: String(redis.port), SMTP_PORT: String(smtp.port) }
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, ['--expose-gc', '--import=tsx', fixture], { cwd: root, env, maxBuffer: 1 << 20, timeout: 300_000 }, (error, out, err) => {
      if (error !== null) reject(new Error(`${error.message}\n${err}`)); else resolve(out)
    })
  })
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { growth: number, stored: number, counted: number, explainCache: number }
}

const MB = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`

for (const load of ['pg', 'mysql2', 'mail', 'jobs']) {
  t.test(`40 units of a 4 MB value (${load}): the process keeps at most maxMemory + ${MB(SLACK)}`, async (t) => {
    const result = await run(load)
    t.comment(`${load}: +${MB(result.growth)} retained, ${result.stored} profiles kept, ${MB(result.counted)} counted by the storage, ${MB(result.explainCache)} in the EXPLAIN cache`)
    t.ok(result.counted <= MAX_MEMORY, 'the storage counts no more than maxMemory')
    t.ok(result.stored >= 1, 'profiles are kept (the newest at least)')
    t.ok(result.growth <= MAX_MEMORY + SLACK, `retained ${MB(result.growth)}, at most ${MB(MAX_MEMORY + SLACK)}`)
  })
}
