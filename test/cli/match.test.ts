import t from 'tap'
import { fixture, runCli } from './run-cli.js'
import type { KernelAnswer } from '../../plugins/console.js'

const app = fixture('build-app.mjs')

function answer (args: string[]): { status: number | null, answer: KernelAnswer } {
  const result = runCli(['match', app, ...args, '--json'])
  return { status: result.status, answer: JSON.parse(result.stdout) as KernelAnswer }
}

t.test('a match: route, params, exit 0; a route registered before the kernel is named', async (t) => {
  const { status, stdout, stderr } = runCli(['match', app, '/hello/bob'])
  t.equal(status, 0, stderr)
  t.match(stdout, /^GET http:\/\/localhost\/hello\/bob\nRoute "hello" matches \(controller hello\)\n {2}path {5}\/hello\/\{name\}\n {2}methods {2}GET\n {2}param {4}name = "bob"\nMatched route "hello"\n\nRoute matching trace\n/)
  t.match(stdout, /\nhello\s+GET\s+\/hello\/\{name\}\s+matches\s+matches\n/)
  t.notOk(stdout.includes('\u001b['), 'no colours when piped')
  const early = answer(['/early/12'])
  t.equal(early.status, 0)
  t.equal(early.answer.outcome, 'matched')
  t.same(early.answer.route, { name: 'early_item', url: '/early/:id(^\\d+$)', path: '/early/{id<^\\d+$>}', methods: ['GET'], controller: 'earlyItem', params: { id: '12' } })
})

t.test('a 301: the target, exit 1; --host decides the absolute Location', async (t) => {
  const { status, stdout } = runCli(['match', app, '/blog?page=2', '--host', 'Example.TEST:8080'])
  t.equal(status, 1)
  t.match(stdout, /^GET http:\/\/example\.test:8080\/blog\?page=2\n301 Moved Permanently: Location http:\/\/example\.test:8080\/blog\/\?page=2 \(route "blog"\)\n/)
  t.match(stdout, /\nblog\s+GET\s+\/blog\/\s+trailing slash\s+trailing slash: the route is \/blog\/ \(a GET or HEAD request is redirected\)\n/)
})

t.test('secret query values are masked in what the console prints, as in the logs and pages', async (t) => {
  const { stdout } = runCli(['match', app, '/blog?token=t0k3n&page=2'])
  t.match(stdout, /^GET http:\/\/localhost\/blog\?token=\*{6}&page=2\n301 Moved Permanently: Location http:\/\/localhost\/blog\/\?token=\*{6}&page=2 /)
  t.notMatch(stdout, 't0k3n')
  t.notMatch(answer(['/blog?token=t0k3n']).answer.location, 't0k3n', 'and in --json')
})

t.test('a 405 with Allow, under a prefix; a 404 with message and cause', async (t) => {
  const put = runCli(['match', app, '/api/orders/7', '--method', 'put'])
  t.equal(put.status, 1)
  t.match(put.stdout, /\n405 Method Not Allowed: No route found for "PUT http:\/\/localhost\/api\/orders\/7": Method Not Allowed \(Allow: GET, DELETE\)\n {2}Allow: GET, DELETE\n/)
  t.match(put.stdout, /\napi_order\s+GET\s+\/api\/orders\/\{id\}\s+method\s+method PUT is not in GET\n/)

  const requirement = answer(['/items/abc'])
  t.equal(requirement.status, 1)
  t.equal(requirement.answer.outcome, 'not-found')
  t.equal(requirement.answer.status, 404)
  t.equal(requirement.answer.message, 'No route found for "GET http://localhost/items/abc"')
  t.equal(requirement.answer.cause, 'No routes found for "/items/abc/".')
  t.same(requirement.answer.trace.find((line) => line.name === 'item'), {
    name: 'item', methods: ['GET'], path: '/items/{id}', verdict: 'requirement', reason: 'requirement "id" failed: "abc" does not match ^\\d+$', closeness: 3
  })

  const empty = answer(['/hello/'])
  t.equal(empty.answer.outcome, 'not-found', 'an empty parameter does not match')
  t.equal(empty.answer.cause, 'No routes found for "/hello".')
  t.equal(empty.answer.trace.find((line) => line.name === 'hello')!.verdict, 'requirement')

  const raw = answer(['/foo/../hello/x'])
  t.equal(raw.answer.url, 'http://localhost/foo/../hello/x', 'the path is matched as written, dot segments kept')
  t.equal(raw.answer.outcome, 'not-found')
})

t.test('the plugin form: its server options are used; a locale outside the enabled ones is a 404', async (t) => {
  const upper = runCli(['match', fixture('plugin-app.mjs'), '/ABOUT'])
  t.equal(upper.status, 0, 'routerOptions.caseSensitive: false, from the module\'s options export')
  const locale = runCli(['match', fixture('plugin-app.mjs'), '/de/contact', '--json'])
  t.equal(locale.status, 1)
  const answer = JSON.parse(locale.stdout) as KernelAnswer
  t.equal(answer.status, 404)
  t.equal(answer.trace[0].reason, 'requirement "_locale" failed: "de" does not match ^(en|fr)$')
})

t.test('colours on request (FORCE_COLOR, as on a terminal), none with NO_COLOR', async (t) => {
  const coloured = runCli(['match', app, '/hello/bob'], { FORCE_COLOR: '1' })
  t.match(coloured.stdout, '\u001b[32mRoute "hello" matches\u001b[39m')
  t.match(coloured.stdout, '\u001b[1mRoute matching trace\u001b[22m')
  const plain = runCli(['match', app, '/hello/bob'], { FORCE_COLOR: '1', NO_COLOR: '1' })
  t.notOk(plain.stdout.includes('\u001b['))
})

t.test('usage errors exit 2', async (t) => {
  for (const args of [['match', app], ['match', app, 'no-slash'], ['match', app, '/x', '--method', 'BAD METHOD'], ['match', app, '/x', 'extra']]) {
    const { status, stderr } = runCli(args)
    t.equal(status, 2, args.join(' '))
    t.match(stderr, 'usage: fastify-kernel match <app> <path>', args.join(' '))
  }
})

/** The characters a terminal would act on (the line feed aside), which the console's output may not hold. */
function terminalControls (text: string): string[] {
  return [...text].filter((c) => {
    const code = c.codePointAt(0)!
    return (code < 0x20 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f) || (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069)
  })
}

t.test('control characters from the path, --host or a filter are printed escaped (\\u001b), never raw', async (t) => {
  const path = '/x\u001b[2J\u0007\r\u009b\u202e'
  const host = 'evil\u001b]0;pwned\u0007'
  for (const env of [{}, { FORCE_COLOR: '1' }] as Array<Record<string, string>>) {
    const { stdout, stderr } = runCli(['match', app, path, '--host', host], env)
    const printed = stdout + stderr
    const unstyled = [1, 22, 2, 31, 32, 33, 36, 39].reduce((text, code) => text.replaceAll(`\u001b[${code}m`, ''), printed)
    t.same(terminalControls(unstyled), [], `no raw control character${'FORCE_COLOR' in env ? ' (colours: only their own sequences)' : ''}`)
    t.match(printed, 'evil\\u001b]0;pwned\\u0007', 'the host, escaped')
    t.match(printed, '/x\\u001b[2J\\u0007\\u000d\\u009b\\u202e', 'the path, escaped')
  }
  const json = runCli(['match', app, '/hello/\u001b[31mred\u0007', '--json'])
  t.same(terminalControls(json.stdout), [])
  t.equal((JSON.parse(json.stdout) as KernelAnswer).url, 'http://localhost/hello/\u001b[31mred\u0007', '--json stays JSON, its strings intact')
  const filtered = runCli(['routes', app, 'nothing\u001b[2J'])
  t.equal(filtered.stderr, 'fastify-kernel: no route name or path contains "nothing\\u001b[2J"\n')
})
