// Replays compose.yaml without a container engine: Debian's redis-server and nginx, and two
// service processes from dist/, on free loopback ports; nginx's config is deploy/nginx.conf with
// the upstream pointed at the two processes. Checks the recipe's promises, then stops what it
// started (by PID). Usage: npm run build && node deploy/try-without-docker.mjs
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '..')
const dir = mkdtempSync(join(tmpdir(), 'kernel-deploy-'))
const children = []

async function freePort () {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

function run (command, args, env = {}) {
  const child = spawn(command, args, { cwd: root, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (c) => { output += c })
  child.stderr.on('data', (c) => { output += c })
  children.push(child)
  return { child, output: () => output }
}

async function until (what, check) {
  for (let i = 0; i < 200; i++) {
    try { if (await check()) return } catch {}
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}

const results = []
function check (name, ok, detail = '') { results.push(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail === '' ? '' : ` (${detail})`}`) }

try {
  const [redisPort, portA, portB, proxyPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()])
  run('/usr/bin/redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--maxmemory', '256mb', '--maxmemory-policy', 'volatile-lru'])
  // APP_ENV=test: production pages and debug off, but the demo users (admin/admin) exist
  const env = { APP_ENV: 'test', HOST: '127.0.0.1', APP_SESSION_SECRET: 'a-shared-session-secret-of-40-characters', REDIS_URL: `redis://127.0.0.1:${redisPort}`, TRUST_PROXY: 'true', LOG_LEVEL: 'warn' }
  await until('redis', () => new Promise((resolve) => { const c = connect(redisPort, '127.0.0.1', () => { c.end(); resolve(true) }); c.on('error', () => resolve(false)) }))
  for (const port of [portA, portB]) run(process.execPath, ['service/dist/main.js'], { ...env, PORT: String(port) })
  for (const port of [portA, portB]) await until(`service on ${port}`, async () => (await fetch(`http://127.0.0.1:${port}/_health`)).ok)

  const conf = readFileSync(join(root, 'deploy/nginx.conf'), 'utf8')
    .replace('server app:8000 max_fails=2 fail_timeout=5s;', `server 127.0.0.1:${portA}; server 127.0.0.1:${portB};`)
    .replace('listen 80;', `listen 127.0.0.1:${proxyPort};`)
    .replace('location / {', 'access_log ' + join(dir, 'access.log') + ' upstreams;\n    location / {')
  writeFileSync(join(dir, 'nginx.conf'), `daemon off; pid ${join(dir, 'nginx.pid')}; error_log ${join(dir, 'error.log')};
events {}
http { log_format upstreams '$status $upstream_addr $request'; client_body_temp_path ${dir}; proxy_temp_path ${dir}; fastcgi_temp_path ${dir}; uwsgi_temp_path ${dir}; scgi_temp_path ${dir};
${conf} }`)
  run('/usr/sbin/nginx', ['-p', dir, '-c', join(dir, 'nginx.conf')])
  const base = `http://127.0.0.1:${proxyPort}`
  await until('nginx', async () => (await fetch(`${base}/_health`)).ok)

  check('GET /_health through nginx', (await (await fetch(`${base}/_health`)).json()).redis === 'ready')
  // the form carries a CSRF token tied to the visitor's session
  const form = await fetch(`${base}/login`)
  const formCookie = form.headers.getSetCookie().find((c) => c.startsWith('sessionId='))?.split(';')[0] ?? ''
  const token = /name="_csrf_token" value="([^"]+)"/.exec(await form.text())?.[1] ?? ''
  const login = await fetch(`${base}/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: formCookie }, body: `_username=admin&_password=admin&_csrf_token=${encodeURIComponent(token)}` })
  const cookie = login.headers.getSetCookie().find((c) => c.startsWith('sessionId='))?.split(';')[0]
  check('form login through nginx', login.status === 302 && cookie !== undefined, String(login.status))
  const statuses = []
  for (let i = 0; i < 20; i++) statuses.push((await fetch(`${base}/admin`, { headers: { cookie } })).status)
  check('20 × GET /admin with the session cookie, round-robin over both replicas', statuses.every((s) => s === 200), statuses.join(','))
  const log = readFileSync(join(dir, 'access.log'), 'utf8')
  const upstreams = new Set([...log.matchAll(/^200 (\S+) GET \/admin/gm)].map((m) => m[1]))
  check('both replicas served /admin', upstreams.size === 2, [...upstreams].join(' '))
  const api = await fetch(`${base}/api/me`, { headers: { authorization: 'Bearer admin-api-token' } })
  check('Bearer API through nginx', api.status === 200, String(api.status))
  const adminPage = await (await fetch(`${base}/admin`, { headers: { cookie } })).text()
  const logoutToken = /name="_csrf_token" value="([^"]+)"/.exec(adminPage)?.[1] ?? ''
  const logout = await fetch(`${base}/logout`, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: `_csrf_token=${encodeURIComponent(logoutToken)}` })
  const after = []
  for (let i = 0; i < 4; i++) after.push((await fetch(`${base}/admin`, { headers: { cookie } })).status)
  check('logout on one replica ends the session on both', logout.status === 302 && after.every((s) => s === 401), after.join(','))
} catch (error) {
  check('run', false, error.message)
} finally {
  for (const child of children.reverse()) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      await exited
    }
  }
  rmSync(dir, { recursive: true, force: true })
}
console.log(results.join('\n'))
process.exit(results.some((r) => r.startsWith('FAIL')) ? 1 : 0)
