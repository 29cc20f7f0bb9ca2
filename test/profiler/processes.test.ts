/**
 * Every process of an app shares one set of profiles, with the default options (issue 31): a
 * bookshop (fixtures/processes/) registers the kernel with `debug: true` and no storage in each
 * of its processes — two web servers, a BullMQ worker, commands — and each point is checked
 * through the servers' own pages: the command and the job found from any server, the links
 * between a request and its job both ways (and a job's job), the redirect link in Debian's
 * chromium, a writer killed with SIGKILL mid-load while the others serve, the bound. Real
 * processes (the compiled package), a real redis-server.
 */
import t from 'tap'
import type { Test } from 'tap'
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { buildOnce, root } from '../build-once.js'
import { TestRedis } from '../redis/server.js'
import { chromiumAvailable, launchChromium } from '../chromium.js'
import { FileProfileStorage } from '../../src/profiler/storage/file.js'

buildOnce()

const FIXTURES = resolve(import.meta.dirname, 'fixtures/processes')
const artifacts = resolve(import.meta.dirname, '../artifacts')
const MAX_PROFILES = 300

/** The bookshop in a folder of its own (a package.json: the app's root), the repository's node_modules linked in. */
function project (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'bookshop-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'bookshop', private: true, type: 'module' }))
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'))
  for (const name of readdirSync(FIXTURES)) copyFileSync(join(FIXTURES, name), join(dir, name))
  return dir
}

interface Running {
  child: ChildProcess
  output: () => string
  /** the first match of `pattern` in the output once written; throws if the process exits first */
  says: (pattern: RegExp) => Promise<RegExpExecArray>
}

/** A process of the bookshop, started from another working directory than its root (the root is found from the script). */
function run (t: Test, dir: string, script: string, env: Record<string, string>): Running {
  const child = spawn(process.execPath, [join(dir, script)], { cwd: tmpdir(), env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    await exited
  })
  let output = ''
  for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const says = async (pattern: RegExp): Promise<RegExpExecArray> => {
    for (;;) {
      const match = pattern.exec(output)
      if (match !== null) return match
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${script} exited (${child.exitCode ?? child.signalCode}) before saying ${pattern}:\n${output}`)
      await Promise.race([once(child.stdout!, 'data'), once(child.stderr!, 'data'), once(child, 'exit')])
    }
  }
  return { child, output: () => output, says }
}

async function server (t: Test, dir: string, env: Record<string, string>): Promise<Running & { base: string }> {
  const running = run(t, dir, 'server.mjs', env)
  const base = (await running.says(/listening (http:\/\/127\.0\.0\.1:\d+)/))[1]
  return { ...running, base }
}

/** A command's run to its end: its exit code, its token, what it printed. */
async function command (t: Test, dir: string, env: Record<string, string>): Promise<{ code: number, token: string, output: string }> {
  const running = run(t, dir, 'command.mjs', env)
  const [code] = await once(running.child, 'exit') as [number]
  return { code, token: /token ([0-9a-f]{6})/.exec(running.output())?.[1] ?? '', output: running.output() }
}

async function page (url: string): Promise<{ status: number, body: string, location: string | null }> {
  const res = await fetch(url, { redirect: 'manual' })
  return { status: res.status, body: await res.text(), location: res.headers.get('location') }
}

/**
 * A link the server resolves when it is followed (an added job's profile), once the worker has
 * run the job: asked again until it redirects. The worker is another process; there is no clock
 * of ours to move, so this waits, bounded.
 */
async function followWhenRun (url: string): Promise<string | null> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const res = await page(url)
    if (res.status === 302) return res.location
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return null
}

t.test('a bookshop\'s servers, worker and commands on the default storage, seen from any server', async (t) => {
  const redis = await TestRedis.start(t)
  const dir = project(t)
  const env = { REDIS_PORT: String(redis.port), QUEUE: `books-${process.pid}`, MAX_PROFILES: String(MAX_PROFILES) }
  const [one, two] = await Promise.all([server(t, dir, env), server(t, dir, env)])
  const worker = run(t, dir, 'worker.mjs', env)
  await worker.says(/^ready$/m)
  t.match(one.output(), `the profiler keeps profiles in ${join(dir, 'var', 'profiler')}, shared by every process of this app`, 'the folder, under the app\'s root (not the working directory), said at start')

  await t.test('commands: each one\'s token opens on either server, with its panels, however the script ends', async (t) => {
    const tokens: string[] = []
    for (const exit of ['exit', 'close', 'return']) {
      const ran = await command(t, dir, { ...env, EXIT: exit })
      t.equal(ran.code, 0, `${exit}: exit code 0`)
      t.match(ran.token, /^[0-9a-f]{6}$/, `${exit}: it printed its token`)
      tokens.push(ran.token)
      const shown = await page(`${two.base}/_profiler/${ran.token}`)
      t.equal(shown.status, 200)
      t.match(shown.body, 'books:reindex', `${exit}: the server shows the command's profile`)
      t.notMatch(shown.body, 'not found')
      const logs = await page(`${one.base}/_profiler/${ran.token}?panel=logs`)
      t.match(logs.body, 'one book has no title', `${exit}: with its panels (its log records)`)
    }
    const search = await page(`${one.base}/_profiler/?kind=command&name=books:reindex`)
    for (const token of tokens) t.match(search.body, token, `the search page lists ${token}`)
  })

  await t.test('a request queues a job a worker process runs, which queues another: linked both ways, from either server', async (t) => {
    const post = await fetch(`${one.base}/books`, { method: 'POST', redirect: 'manual' })
    t.equal(post.status, 303)
    const request = post.headers.get('x-debug-token')!
    const job = await followWhenRun(`${two.base}/_profiler/${request}/queue/1`)
    t.match(job, /^\/_profiler\/[0-9a-f]{6}$/, 'request → job: the queue panel\'s link leads to the job\'s profile, recorded by the worker process')
    const jobToken = job!.slice(-6)
    const jobPage = await page(`${one.base}/_profiler/${jobToken}`)
    t.match(jobPage.body, 'books-', 'the job\'s profile')
    t.match(jobPage.body, `href="/_profiler/${request}" id="parent"`, 'job → request: "Part of" the request')
    t.match((await page(`${two.base}/_profiler/${jobToken}?panel=logs`)).body, 'reindexing', 'with what the job logged')
    t.match((await page(`${two.base}/_profiler/${request}`)).body, `/_profiler/${jobToken}`, 'the request lists the job among the units recorded within it')
    const next = await followWhenRun(`${one.base}/_profiler/${jobToken}/queue/1`)
    t.match(next, /^\/_profiler\/[0-9a-f]{6}$/, 'job → job: the notify job it queued has its profile')
    t.match((await page(`${two.base}${next!}`)).body, `href="/_profiler/${jobToken}" id="parent"`, 'part of the reindex job')
  })

  if (chromiumAvailable(t)) {
    await t.test('in a browser: the form POST, its 303, the next page\'s toolbar names the POST, whose profile lists its job', async (t) => {
      const browser = await launchChromium(t)
      if (browser === undefined) return
      mkdirSync(artifacts, { recursive: true })
      const tab = await browser.newPage()
      await tab.goto(`${one.base}/`)
      await Promise.all([tab.waitForURL(`${one.base}/books/1`), tab.click('button[type=submit]')])
      const redirect = tab.locator('[data-kwdt="redirect"]')
      await redirect.waitFor()
      const text = (await redirect.textContent())!.replace(/\s+/g, ' ').trim()
      t.match(text, /^Redirect from 303 POST @book_create \([0-9a-f]{6}\)$/, `the toolbar: "${text}"`)
      await tab.screenshot({ path: join(artifacts, 'redirect-toolbar.png') })
      const postToken = /\(([0-9a-f]{6})\)/.exec(text)![1]
      await Promise.all([tab.waitForURL(`${one.base}/_profiler/${postToken}`), redirect.locator('a').click()])
      t.match(await tab.textContent('body'), '/books', 'its link opens the POST\'s profile')
      const job = await followWhenRun(`${one.base}/_profiler/${postToken}/queue/1`)
      t.ok(job, 'whose job the worker ran')
      await tab.goto(`${one.base}/_profiler/${postToken}?panel=queue`)
      await tab.screenshot({ path: join(artifacts, 'redirect-post-queue.png'), fullPage: true })
      await Promise.all([tab.waitForURL(`${one.base}${job!}`), tab.click(`a[href="/_profiler/${postToken}/queue/1"]`)])
      t.match(await tab.textContent('body'), 'reindex', 'the queue panel\'s link opens the job\'s profile')
    })
  }

  await t.test('a writer killed with SIGKILL mid-load: no failed request on the others, every profile listed readable, the bound held', async (t) => {
    const victim = await server(t, dir, env)
    const victimSlot = (await fetch(`${victim.base}/ping`)).headers.get('x-debug-token')!.slice(0, 2)
    const survivors = [one, two]
    const count = { failed: 0, served: 0, victim: 0 }
    const stop = { survivors: false, victim: false }
    const loop = async (base: string, counts: boolean, stopped: () => boolean): Promise<void> => {
      while (!stopped()) {
        try {
          const res = await fetch(`${base}/ping`)
          await res.arrayBuffer()
          if (counts && res.status !== 200) count.failed++
          if (counts) count.served++
        } catch {
          if (counts) count.failed++
        }
      }
    }
    const victimLoop = async (): Promise<void> => {
      while (!stop.victim) {
        try {
          await (await fetch(`${victim.base}/ping`)).arrayBuffer()
          count.victim++
        } catch {
          return
        }
      }
    }
    const loops = [
      ...survivors.flatMap((s) => [loop(s.base, true, () => stop.survivors), loop(s.base, true, () => stop.survivors)]),
      victimLoop(), victimLoop()
    ]
    const until = async (done: () => boolean): Promise<void> => { while (!done()) await new Promise((resolve) => setTimeout(resolve, 20)) }
    await until(() => count.victim >= 150)
    const exited = once(victim.child, 'exit')
    victim.child.kill('SIGKILL')
    await exited
    stop.victim = true
    const killedAt = count.served
    await until(() => count.served >= killedAt + 80)
    stop.survivors = true
    await Promise.all(loops)
    t.equal(count.failed, 0, `no request to the other servers failed (${count.served} served; the killed one had served ${count.victim})`)

    // the survivors' last saves reach the disk a moment after their responses: both servers list the same profiles once they have
    const listing = async (base: string): Promise<{ body: string, tokens: string[] }> => {
      const body = (await page(`${base}/_profiler/?url=/ping&limit=500`)).body
      return { body, tokens: [...new Set([...body.matchAll(/href="\/_profiler\/([0-9a-f]{6})"/g)].map((match) => match[1]!))].sort() }
    }
    let [first, second] = [await listing(one.base), await listing(two.base)]
    for (let attempt = 0; attempt < 50 && first.tokens.join() !== second.tokens.join(); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      ;[first, second] = [await listing(one.base), await listing(two.base)]
    }
    t.same(second.tokens, first.tokens, 'both servers list the same profiles: the same bound on the same records (ties of a millisecond included)')
    const search = first
    const listed = first.tokens
    const stored = Number(/(\d+) stored\./.exec(search.body)?.[1])
    t.equal(stored, MAX_PROFILES, `the search page: ${stored} stored, the bound for the folder as a whole`)
    t.ok(listed.length > 0 && listed.length <= MAX_PROFILES, `${listed.length} listed`)
    t.ok(listed.some((token) => token.startsWith(victimSlot)), 'the killed server\'s profiles are among them')
    const unreadable: string[] = []
    for (const token of listed) {
      const shown = await page(`${two.base}/_profiler/${token}`)
      if (shown.status !== 200 || shown.body.includes('not found') || !shown.body.includes('/ping')) unreadable.push(`${token} (${shown.status}${token.startsWith(victimSlot) ? ', the killed server\'s' : ''})`)
    }
    t.same(unreadable, [], 'every profile listed opens, the killed one\'s included')
    for (const s of survivors) t.notMatch(s.output(), /corrupt|torn/, 'no server met a corrupt record')

    // what the disk holds once segments nobody keeps a profile of are deleted (a writer's beat; here, a storage opened on the folder)
    const folder = join(dir, 'var', 'profiler')
    const look = await FileProfileStorage.open(folder, { maxProfiles: MAX_PROFILES, maxAgeMs: 3_600_000 }, { warn: () => undefined })
    await look.close()
    const records = readdirSync(join(folder, 'segments')).reduce((sum, name) => sum + readFileSync(join(folder, 'segments', name), 'utf8').split('\n').length - 1, 0)
    const slack = 3 * Math.ceil(MAX_PROFILES / 8)
    t.ok(records <= MAX_PROFILES + slack, `the disk holds ${records} records: the bound and at most a segment per writer more (${MAX_PROFILES} + ${slack})`)
  })
})

t.test('a command with an explicit memory storage says once, at its first unit, that nobody can open its profiles; and indeed no server can', async (t) => {
  const redis = await TestRedis.start(t)
  const dir = project(t)
  const env = { REDIS_PORT: String(redis.port), QUEUE: `books-memory-${process.pid}` }
  const web = await server(t, dir, env)
  const ran = await command(t, dir, { ...env, STORAGE: 'memory', EXIT: 'close' })
  t.equal(ran.code, 0)
  t.equal(ran.output.match(/this process serves no HTTP: the profiles of its commands cannot be opened from any other process/g)?.length, 1, 'said once')
  t.match((await page(`${web.base}/_profiler/${ran.token}`)).body, `Token "${ran.token}" not found.`, 'the server cannot open it')
})
