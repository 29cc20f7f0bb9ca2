/**
 * BullMQ and nodemailer are seen with no code from the app whatever the way they are loaded
 * (`import`: nodemailer 10's ES module copy; `require`: its CommonJS copy; BullMQ's CommonJS
 * build either way) and whatever the order of their loading, the app's Queue, Worker and
 * transporter, and the kernel's registration; restored when the app closes; never touched in
 * production. Each case is an app of its own (a child process), so the order is real.
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { buildOnce } from '../../build-once.js'
import { TestRedis } from '../../redis/server.js'

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'work-loading', 'app.mjs')
const run = promisify(execFile)
const OWN = { add: true, callProcessJob: true, sendMail: true, processPlugins: true }

buildOnce()
const redis = await TestRedis.start(t)

async function app (env: Record<string, string>): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, [FIXTURE], { env: { ...process.env, REDIS_PORT: String(redis.port), ...env }, timeout: 60_000 })
  return JSON.parse(stdout) as Record<string, unknown>
}

for (const load of ['esm', 'cjs']) {
  for (const when of ['before', 'after']) {
    t.test(`debug: ${load === 'esm' ? 'imported' : 'required'} ${when} the kernel's registration`, async (t) => {
      const seen = await app({ LOAD: load, WHEN: when, DEBUG: '1' })
      t.same(seen.jobs, ['double'], 'the job added is in the request\'s queue panel')
      t.same(seen.mails, [`loaded by ${load} ${when}`], 'the mail sent is in its mail panel')
      t.match(seen.job, { name: /^loading-.*:double$/, parent: true }, 'of kind job, linked to the request')
      t.match(seen.whileOpen, { add: false, callProcessJob: false, sendMail: false, processPlugins: false }, 'instrumented while the profiler is alive')
      t.same(seen.afterClose, OWN, 'each method its own again once the app closed')
    })
  }
}

for (const load of ['esm', 'cjs']) {
  for (const when of ['before', 'after']) {
    t.test(`production: ${load === 'esm' ? 'imported' : 'required'} ${when} registration, neither library is touched`, async (t) => {
      const seen = await app({ LOAD: load, WHEN: when, DEBUG: '0' })
      t.equal(seen.token, null, 'no profile')
      t.same(seen.whileOpen, when === 'before' ? { ...OWN, sameAdd: true, sameSendMail: true } : OWN, 'every method the library\'s own (Queue#add and Mail#sendMail the very same functions)')
      t.same(seen.afterClose, OWN)
    })
  }
}
