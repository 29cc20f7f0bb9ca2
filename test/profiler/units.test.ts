import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, profilerOf } from '../helpers.js'
import { dump, errorCodes } from '../../index.js'
import type { Profile } from '../../src/profiler/profile.js'
import { host, page } from './helpers.js'
import { startUpstream } from './io/upstream.js'

/** The newest stored profile of `kind` named `name`. */
async function unitProfile (app: FastifyInstance, kind: string, name: string): Promise<Profile> {
  await app.kernelProfiler.settled()
  const [summary] = await profilerOf(app).storage.find({ kind, name })
  t.ok(summary, `a ${kind} profile named ${name} is stored`)
  return await app.kernelProfiler.profileOf(summary!.token)
}

t.test('record(): a unit of work gets a profile with the same panels as a request', async (t) => {
  const upstream = await startUpstream(t)
  const logged: string[] = []
  const app = await buildApp({ debug: true }, { logger: { level: 'info', stream: { write: (line: string) => { logged.push(line) } } } })
  t.teardown(() => app.close())

  const result = await app.kernelProfiler.record({ kind: 'job', name: 'emails:send' }, async () => {
    const res = await fetch(`${upstream.url}/ok?api_key=k3y`)
    await res.text()
    dump({ to: 'ada@example.test' }, 'the message')
    app.log.warn({ attempt: 2 }, 'retrying the welcome mail')
    return 'sent'
  })
  t.equal(result, 'sent', 'record() resolves to what the function returns')

  const profile = await unitProfile(app, 'job', 'emails:send')
  t.equal(profile.kind, 'job')
  t.equal(profile.name, 'emails:send')
  t.equal(profile.method, 'JOB', 'summarised as Symfony summarises a command: the kind as the method')
  t.equal(profile.url, 'emails:send', 'and the name as the URL')
  t.equal(profile.statusCode, 0, 'exit code 0: it returned')
  t.equal(profile.ip, '')
  t.equal(profile.parent, undefined, 'recorded outside any other unit: no parent')
  const calls = profile.collected.http_client!.calls
  t.equal(calls.length, 1, 'its HTTP call')
  t.match(calls[0]!.url, /\/ok\?api_key=\*\*\*\*\*\*$/, 'masked by the one redaction policy')
  const dumps = profile.collected.dump!.dumps
  t.equal(dumps.length, 1, 'its dump()')
  t.match(dumps[0]!.text, 'ada@example.test')
  const logs = profile.collected.logs!
  t.ok(logs.some((record) => record.message === 'retrying the welcome mail' && record.levelName === 'warn' && (record.context as { attempt?: number }).attempt === 2), 'what it logged through the app\'s logger')
  t.ok(logged.some((line) => line.includes('retrying the welcome mail')), 'which still wrote it')
  t.ok(profile.collected.time!.timeline!.rows.some((row) => row.kind === 'http_client'), 'its timeline')
  t.equal(profile.collected.request, undefined, 'no request panel: it is no HTTP request')
  t.equal(profile.collected.routing, undefined, 'no routing panel')

  const html = (await page(app, `/_profiler/${profile.token}`)).body
  t.match(html, '<span class="method">JOB</span> emails:send', 'its page says what it was')
  t.match(html, 'status-success', 'and that it ended well')
  t.match(html, 'data-panel="http_client"', 'with its panels')
  t.notMatch(html, 'data-panel="request"')
})

t.test('record(): a unit that throws rejects with its error, and its profile shows it', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const failure = new Error('the SMTP server said no')
  await t.rejects(app.kernelProfiler.record({ kind: 'job', name: 'emails:fail' }, async () => { throw failure }), failure)
  await t.rejects(app.kernelProfiler.record({ kind: 'command', name: 'sync:fail' }, () => { throw new TypeError('synchronous') }), { name: 'TypeError', message: 'synchronous' })
  const profile = await unitProfile(app, 'job', 'emails:fail')
  t.equal(profile.statusCode, 1, 'exit code 1: it threw')
  t.equal(profile.collected.exception![0]!.message, 'the SMTP server said no', 'the exception panel has its error')
  const html = (await page(app, `/_profiler/${profile.token}`)).body
  t.match(html, 'data-panel="exception"', 'and it opens on the exception')
  t.match(html, '<span class="status status-error" id="status">failed</span>')
  t.equal((await unitProfile(app, 'command', 'sync:fail')).statusCode, 1, 'a synchronous throw too')
})

t.test('recordings inside recordings are linked: parent and children, both ways', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/checkout', async () => {
      // a job run inline during a request is a child of the request's profile
      await app.kernelProfiler.record({ kind: 'job', name: 'invoice:render' }, async () => { dump('inline') })
      return 'ok'
    })
  })
  t.teardown(() => app.close())

  const res = await app.inject({ url: '/checkout', headers: { host } })
  const request = await app.kernelProfiler.profileOf(res)
  const job = await unitProfile(app, 'job', 'invoice:render')
  t.equal(job.parent, request.token, 'the inline job names the request as its parent')
  t.equal(request.collected.dump, undefined, 'what the job did is its own, not the request\'s')
  t.equal(job.collected.dump!.dumps.length, 1)

  // a request injected by a command is a child of the command's profile
  let injected: string | undefined
  await app.kernelProfiler.record({ kind: 'command', name: 'cache:warmup' }, async () => {
    injected = String((await app.inject({ url: '/about', headers: { host } })).headers['x-debug-token'])
  })
  const command = await unitProfile(app, 'command', 'cache:warmup')
  t.equal((await app.kernelProfiler.profileOf(injected!)).parent, command.token, 'the injected request names the command as its parent')

  const requestPage = (await page(app, `/_profiler/${request.token}`)).body
  t.match(requestPage, `href="/_profiler/${job.token}"`, 'the request\'s page links the job recorded within it')
  t.match(requestPage, /id="children">[^]*job invoice:render/)
  const jobPage = (await page(app, `/_profiler/${job.token}`)).body
  t.match(jobPage, `<a href="/_profiler/${request.token}" id="parent"`, 'the job\'s page links its parent')

  // an explicit parent: a job processed later links back to the profile that queued it
  let given: string | undefined
  await app.kernelProfiler.record({ kind: 'job', name: 'late', parent: command.token }, (token) => { given = token })
  const late = await unitProfile(app, 'job', 'late')
  t.equal(late.parent, command.token)
  t.equal(given, late.token, 'the function is given its profile\'s token')
  // no parent at all, even inside another unit
  await app.kernelProfiler.record({ kind: 'command', name: 'outer' }, async () => {
    await app.kernelProfiler.record({ kind: 'job', name: 'detached', parent: null }, () => 1)
  })
  t.equal((await unitProfile(app, 'job', 'detached')).parent, undefined, 'parent: null links it to none')
})

t.test('concurrent units keep what each of them did', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const names = Array.from({ length: 20 }, (_, i) => `unit-${String(i).padStart(2, '0')}`)
  await Promise.all(names.map((name) => app.kernelProfiler.record({ kind: 'task', name }, async () => {
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setImmediate(resolve))
      dump(name)
    }
  })))
  for (const name of names) {
    const profile = await unitProfile(app, 'task', name)
    t.same(profile.collected.dump!.dumps.map((d) => d.text), [`'${name}'`, `'${name}'`, `'${name}'`], `${name}: its own three dumps`)
  }
})

t.test('the search filters by kind and name, and shows them', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  await app.inject({ url: '/about', headers: { host } })
  await app.kernelProfiler.record({ kind: 'command', name: 'books:import <script>' }, () => undefined)
  await app.kernelProfiler.record({ kind: 'report', name: 'monthly' }, () => undefined)
  await app.kernelProfiler.settled()
  const commands = (await page(app, '/_profiler/?kind=command')).body
  t.match(commands, 'books:import &lt;script&gt;', 'a unit\'s name, escaped')
  t.notMatch(commands, '/about')
  t.notMatch(commands, 'monthly')
  const requests = (await page(app, '/_profiler/?kind=request')).body
  t.match(requests, '/about')
  t.notMatch(requests, 'books:import')
  t.match((await page(app, '/_profiler/?kind=report&name=month')).body, '<td>report</td>', 'an app\'s own kind')
  t.match((await page(app, '/_profiler/?kind=NOT%20A%20KIND')).body, '/about', 'a malformed kind is no filter, never an error')
})

t.test('record() checks its unit in every mode', async (t) => {
  for (const debug of [true, false]) {
    const app = await buildApp({ debug })
    t.teardown(() => app.close())
    for (const unit of [{ kind: 'Job', name: 'x' }, { kind: 'job', name: '' }, { kind: 'request', name: 'x' }, { kind: 'job', name: 'x', parent: 'nope' }, null]) {
      await t.rejects(app.kernelProfiler.record(unit as never, () => 1), errorCodes.KERNEL_INVALID_UNIT, `debug ${String(debug)}: ${JSON.stringify(unit)} is refused`)
    }
  }
})

t.test('where no profiler runs, record() only calls its function', async (t) => {
  for (const kernel of [{ debug: false }, { debug: true, profiler: false }]) {
    const app = await buildApp(kernel)
    t.teardown(() => app.close())
    t.equal(app.kernelProfiler.enabled, false, `${JSON.stringify(kernel)}: no profiler`)
    let calls = 0
    t.equal(await app.kernelProfiler.record({ kind: 'job', name: 'x' }, () => { calls++; return 42 }), 42, 'its value')
    t.equal(calls, 1, 'called once')
    await t.rejects(app.kernelProfiler.record({ kind: 'job', name: 'x' }, async () => { throw new Error('as thrown') }), { message: 'as thrown' })
    await t.rejects(app.kernelProfiler.profileOf('abcdef'), errorCodes.KERNEL_NOT_PROFILED)
  }
})
