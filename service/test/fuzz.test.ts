// Hostile-input fuzzing of the service over a real socket: random methods (CONNECT included),
// odd request targets, broken encodings and headers, bodies. Every request must get a final
// status line, never a 5xx (but from the route that fails on purpose), and the service must
// still answer afterwards. Bounded: a fixed number of requests (FUZZ_REQUESTS, 300), a few at a
// time, each with a time limit; the seed is printed (FUZZ_SEED=<n> replays a run).
import t from 'tap'
import type { Test } from 'tap'
import net from 'node:net'
import type { FastifyInstance } from 'fastify'
import { loadServiceEnv } from '../src/env.js'
import { buildService } from '../src/build-service.js'

const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 300)
const PARALLEL = 6
const ANSWER_TIMEOUT_MS = 5000
const SEED = Number(process.env.FUZZ_SEED ?? 20261123)

/** mulberry32: a small seeded generator, so that a failing run can be replayed. */
function generator (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = a
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

class Fuzzer {
  constructor (private readonly random: () => number) {}

  int (max: number): number { return Math.floor(this.random() * max) }
  pick<T> (items: readonly T[]): T { return items[this.int(items.length)] }
  chance (p: number): boolean { return this.random() < p }

  method (): string {
    if (this.chance(0.9)) return this.pick(['GET', 'GET', 'GET', 'HEAD', 'POST', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'TRACE', 'CONNECT', 'CONNECT', 'PROPFIND', 'SEARCH', 'QUERY', 'PURGE'])
    return this.pick(['M-SEARCH', 'get', 'FOO', 'G\tET', ''])
  }

  segment (): string {
    switch (this.int(12)) {
      case 0: return this.pick(['hello', 'items', 'blog', 'admin', 'login', 'logout', 'api', 'me', 'form', 'fr', 'en', 'de', 'contact', 'profile', '_profiler', '_wdt', 'latest', 'robots.txt', 'favicon.ico'])
      case 1: return this.pick(['%zz', '%E0%A4', '%E0%A4%A', '%2F', '%2f', '%00', '%25', '%', '%C3%BC', '%FF%FE', '%252F', '%u0041'])
      case 2: return this.pick(['.', '..', '', '...', '.%2E', '%2E%2E'])
      case 3: return this.pick(['<script>alert(1)</script>', '"\'', '{name}', ':id', '*', '(x)', ';jsessionid=1', '%0d%0aSet-Cookie:x=1'])
      case 4: return 'x'.repeat(this.pick([1, 100, 5000, 20000]))
      case 5: return String(this.int(100000))
      case 6: return this.pick(['a,b,c%2Cd', 'type', 'Jürgen'])
      default: return Array.from({ length: 1 + this.int(8) }, () => this.pick('abcXYZ019-_~!$&\'()+,;=@'.split(''))).join('')
    }
  }

  target (method: string): string {
    if (method === 'CONNECT' && this.chance(0.7)) return this.pick(['example.test:443', '127.0.0.1:80', '[::1]:443', 'evil:0', 'a:b:c'])
    const kind = this.int(20)
    if (kind === 0) return '*'
    if (kind === 1) return this.pick(['', 'nopath', '?x=1'])
    const path = '/' + Array.from({ length: this.int(5) }, () => this.segment()).join('/') + (this.chance(0.2) ? '/'.repeat(1 + this.int(3)) : '')
    const query = this.chance(0.3) ? '?' + this.pick(['page=2', 'a=%zz', 'panel=exception', 'type=request&token=x', '&&==', 'x=' + 'y'.repeat(3000)]) : ''
    const fragment = this.chance(0.05) ? '#frag' : ''
    const absolute = kind === 2 ? this.pick(['http://other.test:9999', 'https://example.test', 'ftp://x']) : ''
    return absolute + path + query + fragment
  }

  headers (): string[] {
    const headers: string[] = []
    // mostly hosts that pass, so that most requests reach routing
    const host = this.chance(0.75)
      ? this.pick(['localhost', '127.0.0.1:8000', 'EXAMPLE.test:8080', '[::1]:8000'])
      : this.pick(['bad host!', 'a'.repeat(5000) + '.test', '', 'x:99999999', 'ex ample', null])
    if (host !== null) headers.push(`Host: ${host}`)
    if (this.chance(0.1)) headers.push('Host: second.test')
    if (this.chance(0.3)) headers.push(`Accept: ${this.pick(['application/json', 'text/html', '*/*', 'application/problem+json', 'application/x-json;q=0', ';;;', 'text/*;q=abc'])}`)
    if (this.chance(0.2)) headers.push(`X-Forwarded-Proto: ${this.pick(['https', 'javascript:alert(1)//', 'HTTPS, http', ''])}`)
    if (this.chance(0.2)) headers.push(`X-Forwarded-Host: ${this.pick(['evil.example', 'bad host!', ''])}`)
    if (this.chance(0.1)) headers.push(`X-Forwarded-For: ${this.pick(['203.0.113.9', 'not-an-ip', '::1, 10.0.0.1'])}`)
    if (this.chance(0.2)) headers.push(`Accept-Language: ${this.pick(['fr-CH, fr;q=0.9', 'xx', '*', ';q=', 'de'])}`)
    if (this.chance(0.2)) headers.push(`Referer: ${this.pick(['http://r.test/<b>', '"><script>', '0', ''])}`)
    if (this.chance(0.2)) headers.push(`Cookie: ${this.pick(['sessionId=garbage', 'sessionId=a.b.c; sessionId=d', '=;=;', 'PHPSESSID=1', 'sessionId=' + '%'.repeat(50)])}`)
    if (this.chance(0.2)) headers.push(`Authorization: ${this.pick(['Basic YWRtaW46YWRtaW4=', 'Basic !!!', 'Basic ' + Buffer.from('admin').toString('base64'), 'Bearer admin-api-token', 'Bearer ', 'Digest x', 'Basic ' + 'A'.repeat(4000)])}`)
    if (this.chance(0.05)) headers.push('Upgrade: websocket', 'Connection: Upgrade')
    else headers.push('Connection: close')
    return headers
  }

  /** A body with headers that tell its real length (a body shorter than announced would only wait for the body timeout). */
  body (): { headers: string[], bytes: string } {
    if (this.chance(0.6)) return { headers: [], bytes: '' }
    const type = this.pick(['application/json', 'application/x-www-form-urlencoded', 'text/plain', 'application/x-unknown', 'multipart/form-data; boundary=x', ';;'])
    const content = this.pick(['{"broken": ', '{"_username":"admin","_password":"admin"}', '_username=admin&_password=admin', '_username=%zz&_password=', 'x'.repeat(2000), '\u0000\u0001', '[]'])
    const headers = [`Content-Type: ${type}`]
    if (this.chance(0.2)) headers.push('Expect: 100-continue')
    if (this.chance(0.3)) {
      const length = Buffer.byteLength(content).toString(16)
      return { headers: [...headers, 'Transfer-Encoding: chunked'], bytes: `${length}\r\n${content}\r\n0\r\n\r\n` }
    }
    return { headers: [...headers, `Content-Length: ${Buffer.byteLength(content)}`], bytes: content }
  }

  request (): { text: string, requestLine: string } {
    const method = this.method()
    const target = this.target(method)
    const version = this.chance(0.9) ? 'HTTP/1.1' : this.pick(['HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1 ', 'HTTP/9'])
    const requestLine = `${method} ${target} ${version}`
    const body = this.body()
    return { requestLine, text: `${requestLine}\r\n${[...this.headers(), ...body.headers].join('\r\n')}\r\n\r\n${body.bytes}` }
  }
}

/** The final (non-1xx) status of the answer, or null when none came within the time limit. */
function exchange (port: number, text: string): Promise<number | null> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    let received = ''
    let settled = false
    const settle = (status: number | null): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve(status)
    }
    const timer = setTimeout(() => settle(null), ANSWER_TIMEOUT_MS)
    socket.setEncoding('latin1')
    socket.on('connect', () => socket.write(text, 'utf8'))
    socket.on('data', (chunk: string) => {
      received += chunk
      // skip interim answers (100 Continue): the final status is what counts
      for (const match of received.matchAll(/(?:^|\r\n\r\n)HTTP\/1\.[01] (\d{3}) /g)) {
        const status = Number(match[1])
        if (status >= 200) { settle(status); return }
      }
    })
    socket.on('error', () => settle(null))
    socket.on('close', () => settle(null))
  })
}

async function fuzz (t: Test, app: FastifyInstance, seed: number): Promise<void> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as net.AddressInfo).port
  const fuzzer = new Fuzzer(generator(seed))
  const requests = Array.from({ length: REQUESTS }, () => fuzzer.request())
  const unanswered: string[] = []
  let connects = 0
  const serverErrors: string[] = []
  const statuses = new Map<number, number>()
  for (let i = 0; i < requests.length; i += PARALLEL) {
    const batch = requests.slice(i, i + PARALLEL)
    const answers = await Promise.all(batch.map((request) => exchange(port, request.text)))
    answers.forEach((status, k) => {
      const { requestLine, text } = batch[k]
      if (status === null) unanswered.push(JSON.stringify(text.slice(0, 300)))
      else {
        if (requestLine.startsWith('CONNECT ')) connects++
        statuses.set(status, (statuses.get(status) ?? 0) + 1)
        // /boom fails on purpose (500); nothing else may
        if (status >= 500 && !/^(GET|HEAD) \/boom[ ?]/.test(requestLine)) serverErrors.push(`${status} ${JSON.stringify(text.slice(0, 300))}`)
      }
    })
  }
  t.comment(`seed ${seed}: statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}, ${connects} CONNECT requests answered`)
  t.same(unanswered, [], 'every request got a final status line')
  t.same(serverErrors, [], 'no request but /boom got a 5xx')
  t.ok((statuses.get(200) ?? 0) > 0 && (statuses.get(404) ?? 0) > 0 && (statuses.get(400) ?? 0) < REQUESTS / 2, 'the requests reached routes and misses, most past the HTTP parser')
  t.ok(connects > 0, 'CONNECT requests were among them, and answered')
  const after = await exchange(port, 'GET /hello/world HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
  t.equal(after, 200, 'the service still answers')
}

for (const debug of ['1', '0']) {
  t.test(`fuzzing the service, debug ${debug === '1' ? 'on' : 'off'}`, async (t) => {
    const env = loadServiceEnv({ APP_ENV: 'test', APP_DEBUG: debug, PROFILER_STORAGE: 'memory', TRUST_PROXY: 'true' }, false)
    const app = await buildService(env, { logger: false })
    t.teardown(() => app.close())
    await fuzz(t, app, SEED + Number(debug))
  })
}
