/**
 * BullMQ with no code from the app, against a real redis-server: the jobs a request (or any
 * unit) adds are in its queue panel, and each job a Worker of this process runs is a profile of
 * kind `job`, linked back to the profile that added it.
 */
import t from 'tap'
import type { Test } from 'tap'
import { FlowProducer, Queue, Worker } from 'bullmq'
import type { Job, QueueOptions } from 'bullmq'
import { Redis } from 'ioredis'
import type { FastifyInstance } from 'fastify'
import { createKernelApp } from '../../../index.js'
import type { Profile } from '../../../src/profiler/profile.js'
import { profilerOf, withTestStorage } from '../../helpers.js'
import { host, page, profiled } from '../helpers.js'
import { TestRedis } from '../../redis/server.js'

const redis = await TestRedis.start(t)
const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null }
let queues = 0

/** A fresh queue name, and its Queue closed at the test's end (before the server stops). */
function newQueue (t: Test, options: QueueOptions = { connection }): Queue {
  const queue = new Queue(`q${++queues}-${t.name.slice(0, 8).replace(/\W/g, '')}`, options)
  t.teardown(() => queue.close())
  return queue
}

/** Resolves with each job a worker finished (completed or failed), as they come. */
function finished (worker: Worker, count: number): Promise<Job[]> {
  const jobs: Job[] = []
  return new Promise((resolve) => {
    const done = (job: Job | undefined): void => {
      if (job !== undefined) jobs.push(job)
      if (jobs.length === count) resolve(jobs)
    }
    worker.on('completed', done)
    worker.on('failed', done)
  })
}

async function jobProfiles (app: FastifyInstance, name?: string): Promise<Profile[]> {
  await app.kernelProfiler.settled()
  const summaries = await profilerOf(app).storage.find({ kind: 'job', ...(name === undefined ? {} : { name }), limit: 100 })
  return await Promise.all(summaries.reverse().map(async (summary) => await app.kernelProfiler.profileOf(summary.token)))
}

t.test('a request adds jobs: the queue panel lists them; the Worker of this process runs each in a profile of kind job, linked back', async (t) => {
  // the Queue and the Worker exist before the kernel: prototypes are instrumented, not instances
  const emails = newQueue(t, { connection, defaultJobOptions: { attempts: 3 } })
  const client = new Redis(redis.port, '127.0.0.1')
  t.teardown(() => { client.disconnect() })
  const worker = new Worker(emails.name, async (job) => {
    await client.set(`sent:${job.id!}`, '1')
    if (job.name === 'welcome') await emails.add('audit', { of: job.id })
    return 'done'
  }, { connection, autorun: false })
  t.teardown(() => worker.close())

  const app = await createKernelApp({ kernel: withTestStorage({ debug: true }) })
  t.teardown(() => app.close())
  app.post('/signup', async () => {
    const welcome = await emails.add('welcome', { to: 'ada@example.test', password: 'hunter2', profile: { apiKey: 'k-1', tier: 'gold' } }, { attempts: 2 })
    await emails.addBulk([{ name: 'digest', data: { n: 1 } }, { name: 'digest', data: { n: 2 } }])
    await emails.add('reminder', { in: 'a minute' }, { delay: 60_000 })
    return { id: welcome.id }
  })

  const { res, profile, token } = await profiled(app, { method: 'POST', url: '/signup' })
  const added = profile.collected.queue!.added
  t.same(added.map((job) => [job.via, job.queue, job.name]), [
    ['add', emails.name, 'welcome'], ['addBulk', emails.name, 'digest'], ['addBulk', emails.name, 'digest'], ['add', emails.name, 'reminder']
  ], 'each job added, by Queue#add and #addBulk, in order')
  t.equal(added[0]!.id, res.json().id, 'with the id BullMQ gave it')
  t.ok(added.every((job) => typeof job.id === 'string'), 'every one added')
  t.same(added[0]!.data, { to: 'ada@example.test', password: '******', profile: { apiKey: '******', tier: 'gold' } }, 'its data, secrets masked by the one redaction policy')
  t.equal(added[0]!.attempts, 2, 'its attempts')
  t.equal(added[1]!.attempts, 3, 'the queue\'s default attempts where the job sets none')
  t.equal(added[3]!.delay, 60_000, 'a delay')
  t.notMatch(JSON.stringify(profile), 'hunter2', 'the secret is nowhere in the profile')
  t.ok(profile.collected.time!.timeline!.rows.some((row) => row.kind === 'queue' && row.name === `add ${emails.name}:welcome`), 'the adds are on the timeline')

  // the worker runs the three that are due, and the audit job the welcome job adds
  const done = finished(worker, 4)
  worker.run().catch(() => undefined)
  await done
  const jobs = await jobProfiles(app)
  const welcome = jobs.find((job) => job.name === `${emails.name}:welcome`)!
  t.ok(welcome, 'the welcome job has a profile')
  t.equal(welcome.kind, 'job')
  t.equal(welcome.method, 'JOB')
  t.equal(welcome.statusCode, 0, 'it completed')
  t.equal(welcome.parent, token, 'linked to the request that added it')
  t.match(welcome.collected.queue!.job, { queue: emails.name, name: 'welcome', id: added[0]!.id, attempt: 1, attempts: 2, outcome: 'completed' })
  t.same(welcome.collected.queue!.job!.data, added[0]!.data, 'its data, masked')
  t.ok(welcome.collected.cache!.commands.some((command) => command.command === 'SET' && command.keys[0] === `sent:${added[0]!.id!}`), 'what the job did is its own profile\'s (the Cache panel)')
  t.equal(welcome.collected.queue!.added.length, 1, 'the job it added is in its own queue panel')
  const audit = jobs.find((job) => job.name === `${emails.name}:audit`)!
  t.equal(audit.parent, welcome.token, 'and that job\'s profile is a child of the welcome job\'s: request → job → job')
  t.equal(jobs.filter((job) => job.name === `${emails.name}:digest`).every((job) => job.parent === token), true, 'the bulk jobs link back too')

  // the link from the request's queue panel to each job's own profile, found when followed
  const link = await page(app, `/_profiler/${token}/queue/1`)
  t.equal(link.statusCode, 302)
  t.equal(link.headers.location, `/_profiler/${welcome.token}`, 'the job\'s own profile')
  const delayed = await page(app, `/_profiler/${token}/queue/4`)
  t.equal(delayed.statusCode, 200)
  t.match(delayed.body, /Job &quot;q\d+-\w*:reminder&quot; #\d+ has no profile here: it has not been processed yet, or its run was not profiled, or the worker that ran it keeps its profiles elsewhere/, 'a job not run yet says so')
  t.equal((await page(app, `/_profiler/${token}/queue/9`)).statusCode, 404, 'no such job: 404')
  t.equal((await page(app, `/_profiler/${token}/queue/nope`)).statusCode, 404)
  t.match((await page(app, '/_profiler/abcdef/queue/1')).body, 'Token "abcdef" not found.')

  const panel = (await page(app, `/_profiler/${token}?panel=queue`)).body
  t.match(panel, `<a href="/_profiler/${token}/queue/1" class="job-link">its profile</a>`, 'the panel links each job')
  t.match(panel, /data-panel="queue" class="active"><span>Queue<\/span><span class="badge badge-info">4<\/span>/)
  t.match(panel, '<td>1 min</td>', 'the delay as a person reads it')
  t.match((await page(app, `/_profiler/${welcome.token}`)).body, /id="job-outcome">completed</, 'a job\'s profile opens on its queue panel')
  t.match((await page(app, `/_wdt/${token}`)).body, /data-kwdt="queue">[\s\S]*?data-kwdt-queue>4</, 'the toolbar counts the jobs added')
})

t.test('a failing job: each attempt is a profile of its own, the first "will be retried", the last failed', async (t) => {
  const queue = newQueue(t)
  let calls = 0
  const worker = new Worker(queue.name, async () => {
    calls++
    throw new Error(`the SMTP server said no (${calls})`)
  }, { connection, autorun: false })
  t.teardown(() => worker.close())
  const app = await createKernelApp({ kernel: withTestStorage({ debug: true }) })
  t.teardown(() => app.close())
  let token: string | undefined
  await app.kernelProfiler.record({ kind: 'command', name: 'mail:send' }, async () => {
    token = profilerOf(app).currentToken()
    await queue.add('send', { to: 'bob@example.test' }, { attempts: 2 })
  })
  const done = new Promise((resolve) => { worker.on('failed', (job) => { if (job?.attemptsMade === 2) resolve(job) }) })
  worker.run().catch(() => undefined)
  await done
  const attempts = await jobProfiles(app)
  t.equal(attempts.length, 2, 'two attempts, two profiles')
  t.match(attempts.map((job) => job.collected.queue!.job), [
    { attempt: 1, attempts: 2, outcome: 'retrying', error: 'the SMTP server said no (1)' },
    { attempt: 2, attempts: 2, outcome: 'failed', error: 'the SMTP server said no (2)' }
  ])
  t.same(attempts.map((job) => job.statusCode), [1, 1], 'each failed')
  t.same(attempts.map((job) => job.parent), [token, token], 'both children of the command that added the job')
  t.equal(attempts[0]!.collected.exception![0]!.message, 'the SMTP server said no (1)', 'the exception panel has what the processor threw')
  const exception = (await page(app, `/_profiler/${attempts[0]!.token}?panel=exception`)).body
  t.match(exception, /<span class="class">Error<\/span> <span class="status status-error" data-outcome>the job failed<\/span><\/div>/, 'labelled with the job\'s outcome')
  t.notMatch(exception, /Internal Server Error/, 'no HTTP status: a job answers none')
  const html = (await page(app, `/_profiler/${attempts[0]!.token}?panel=queue`)).body
  t.match(html, /id="job-outcome">failed, will be retried</)
  t.match(html, /id="job-attempt">1 of 2</)
  // the link goes to the newest attempt
  t.equal((await page(app, `/_profiler/${token!}/queue/1`)).headers.location, `/_profiler/${attempts[1]!.token}`)
})

t.test('a job added outside any profiled unit is profiled when run, with no parent; a flow lists its jobs', async (t) => {
  const queue = newQueue(t)
  const steps = newQueue(t)
  const worker = new Worker(queue.name, async () => 'ok', { connection, autorun: false })
  const stepWorker = new Worker(steps.name, async () => 'ok', { connection, autorun: false })
  t.teardown(() => Promise.all([worker.close(), stepWorker.close()]))
  const flows = new FlowProducer({ connection })
  t.teardown(() => flows.close())
  const app = await createKernelApp({ kernel: withTestStorage({ debug: true }) })
  t.teardown(() => app.close())
  await queue.add('unprofiled', { from: 'a cron' })
  app.post('/order', async () => {
    const tree = await flows.add({ name: 'ship', queueName: queue.name, data: { order: 7 }, children: [{ name: 'pick', queueName: steps.name, data: { token: 'secret-t' } }, { name: 'pack', queueName: steps.name, data: {} }] })
    return { id: tree.job.id }
  })
  const { profile, token } = await profiled(app, { method: 'POST', url: '/order', headers: { host } })
  const added = profile.collected.queue!.added
  t.same(added.map((job) => [job.via, job.queue, job.name]), [['flow', queue.name, 'ship'], ['flow', steps.name, 'pick'], ['flow', steps.name, 'pack']], 'the flow\'s jobs, parent first')
  t.match(added[1]!.parentJob, new RegExp(`^${queue.name}:ship #\\S+$`), 'each child names the job waiting for it')
  t.same(added[1]!.data, { token: '******' })

  const done = Promise.all([finished(worker, 2), finished(stepWorker, 2)])
  worker.run().catch(() => undefined)
  stepWorker.run().catch(() => undefined)
  await done
  const jobs = await jobProfiles(app)
  t.equal(jobs.find((job) => job.name === `${queue.name}:unprofiled`)?.parent, undefined, 'added by no profiled unit: no parent')
  for (const name of [`${queue.name}:ship`, `${steps.name}:pick`, `${steps.name}:pack`]) {
    t.equal(jobs.find((job) => job.name === name)?.parent, token, `${name} links back to the request`)
  }
})

t.test('BullMQ\'s own Redis traffic (its scripts, its reads) is shown apart from the app\'s: a unit that made no Redis call counts none', async (t) => {
  const queue = newQueue(t)
  const client = new Redis(redis.port, '127.0.0.1')
  t.teardown(() => { client.disconnect() })
  const worker = new Worker(queue.name, async (job) => {
    await job.updateProgress(50)
    return 'sent'
  }, { connection, autorun: false })
  t.teardown(() => worker.close())
  const app = await createKernelApp({ kernel: withTestStorage({ debug: true }) })
  t.teardown(() => app.close())
  app.post('/notify', async () => {
    const job = await queue.add('notify', { to: 'ada@example.test' })
    return { id: job.id }
  })
  app.post('/notify-and-count', async () => {
    await queue.add('notify', { to: 'bob@example.test' })
    return { count: await client.incr('notifications') }
  })

  const { profile, token } = await profiled(app, { method: 'POST', url: '/notify' })
  const commands = profile.collected.cache!.commands
  t.ok(commands.length > 0 && commands.every((command) => command.library === 'BullMQ' && command.kernel === undefined), 'every command of the add is BullMQ\'s own (its addStandardJob script)')
  t.ok(commands.every((command) => command.origin === undefined), 'with no line of the app\'s')
  t.match((await page(app, `/_wdt/${token}`)).body, /data-kwdt="queue"/)
  t.notMatch((await page(app, `/_wdt/${token}`)).body, /data-kwdt="cache"/, 'the toolbar has no Redis item: the app sent none')
  const panel = (await page(app, `/_profiler/${token}?panel=cache`)).body
  t.notMatch(panel, /data-panel="cache" class="active"><span>Cache<\/span><span class="badge/, 'no count on the Cache tab')
  t.match(panel, /No Redis command was sent by the app during this request/)
  t.match(panel, /<h3>The libraries' own commands<\/h3>\s*<p>What BullMQ sent to Redis for itself/, 'BullMQ\'s commands listed apart')
  t.match(panel, /<table id="cache-library-commands">[^]*?<td class="mono">EVAL/)

  const both = await profiled(app, { method: 'POST', url: '/notify-and-count' })
  const own = both.profile.collected.cache!.commands.filter((command) => command.library === undefined)
  t.same(own.map((command) => command.command), ['INCR'], 'the app\'s own command is the app\'s')
  t.match((await page(app, `/_wdt/${both.token}`)).body, /data-kwdt="cache">[^]*?data-kwdt-count>1</, 'the toolbar counts it alone')

  const done = finished(worker, 2)
  worker.run().catch(() => undefined)
  await done
  const [job] = await jobProfiles(app)
  const jobCommands = job!.collected.cache!.commands
  t.ok(jobCommands.length > 0 && jobCommands.every((command) => command.library === 'BullMQ'), 'a job\'s progress update (BullMQ\'s script) is BullMQ\'s too')
})
