/**
 * `fastify-kernel mcp <app>`: the profiler's MCP server over stdio, spawned by the MCP SDK's own
 * Client as an agent's client config does, reading the file storage of the app that served the
 * requests (another process, still running); and `profile find|triage|diff --json`, the same
 * answers for scripts, matching the web profiler's pages.
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { root } from '../build-once.js'
import { APP, SECRETS, fixtureLine, scenario } from '../profiler/agents/scenario.js'
import { runCli } from './run-cli.js'
import { profilerOf } from '../helpers.js'

type Structured = Record<string, any>

t.test('the tools over stdio, on the file storage of a running app', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kernel-mcp-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const { app, env, tokens } = await scenario(t, { PROFILER_STORAGE: 'file', PROFILER_DIR: dir })
  await (profilerOf(app).storage as unknown as { idle: () => Promise<void> }).idle()

  const stderr: string[] = []
  const transport = new StdioClientTransport({ command: process.execPath, args: [join(root, 'dist/cli/bin.js'), 'mcp', APP], cwd: root, env: { ...process.env, ...env } as Record<string, string>, stderr: 'pipe' })
  transport.stderr?.on('data', (chunk: Buffer) => { stderr.push(chunk.toString()) })
  const client = new Client({ name: 'kernel-test', version: '1.0.0' })
  await client.connect(transport)
  t.teardown(() => client.close())
  const outputs: string[] = []
  const call = async (name: string, args: Record<string, unknown>): Promise<{ structured: Structured, text: string, isError: boolean }> => {
    const result = await client.callTool({ name, arguments: args }) as { structuredContent?: Structured, content: Array<{ text: string }>, isError?: boolean }
    outputs.push(JSON.stringify(result))
    return { structured: result.structuredContent ?? {}, text: result.content.map((block) => block.text).join('\n'), isError: result.isError === true }
  }

  t.same((await client.listTools()).tools.map((tool) => tool.name).sort(), ['compare_profiles', 'get_profile', 'list_profiles', 'triage_profile'])
  t.same((await call('list_profiles', { flags: ['exception'] })).structured.profiles.map((p: Structured) => p.token), [tokens.boom], 'the filters find the exception')
  const triage = await call('triage_profile', { token: tokens.books })
  t.match(triage.structured.findings[0], { kind: 'n_plus_one', count: 5, origin: { file: APP, line: fixtureLine('// the N+1') } }, 'triage names the N+1 with its origin line')
  const diff = await call('compare_profiles', { a: tokens.books, b: tokens.fixed })
  t.same(diff.structured.panels.find((p: Structured) => p.panel === 'db').measures.find((m: Structured) => m.name === 'statements'), { name: 'statements', a: 6, b: 2, delta: -4 })
  const slow = await call('triage_profile', { token: tokens.slow })
  t.ok(slow.structured.findings.some((f: Structured) => f.kind === 'slow_call'))
  for (const token of Object.values(tokens)) await call('get_profile', { token, panel: 'request' })
  await call('get_profile', { token: tokens.login, panel: 'db' })
  const everything = outputs.join('\n')
  for (const secret of SECRETS) t.notOk(everything.includes(secret), `${secret} is in no output`)
  t.match(stderr.join(''), 'reading the file storage', 'the console speaks on stderr, never on the protocol\'s stdout')
})

t.test('profile find|triage|diff --json: the tools\' answers for scripts, as the pages show them', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kernel-find-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const { app, env, tokens, base } = await scenario(t, { PROFILER_STORAGE: 'file', PROFILER_DIR: dir })
  await (profilerOf(app).storage as unknown as { idle: () => Promise<void> }).idle()
  const json = (args: string[]): Structured => {
    const run = runCli(args, env)
    t.equal(run.status, 0, `${args.join(' ')}: ${run.stderr}`)
    return JSON.parse(run.stdout) as Structured
  }

  // find --issues: the flags as filters; the search page lists the same
  const issues = json(['profile', 'find', APP, '--issues', '--json'])
  t.same(issues.profiles.map((p: Structured) => p.token), [tokens.login, tokens.slow, tokens.boom, tokens.books])
  const search = await (await fetch(`${base}/_profiler/?issues=1`)).text()
  t.same([...search.matchAll(/<a href="\/_profiler\/([0-9a-f]{6})">/g)].map((m) => m[1]), issues.profiles.map((p: Structured) => p.token), 'the search page\'s "any issue" lists the same profiles')
  const exception = json(['profile', 'find', APP, '--flag', 'exception', '--json'])
  t.same(exception.profiles.map((p: Structured) => p.token), [tokens.boom])
  const page = await (await fetch(`${base}/_profiler/?flag=exception`)).text()
  t.same([...page.matchAll(/<a href="\/_profiler\/([0-9a-f]{6})">/g)].map((m) => m[1]), [tokens.boom], 'and its flag filter')
  const table = runCli(['profile', 'find', APP, '--flag', 'n_plus_one'], env)
  t.match(table.stdout, new RegExp(`^Token +Method +URL +Status +Duration +Flags\\n${tokens.books} +GET +${base.replace(/\./g, '\\.')}/books +200 +[\\d.]+ ms +n_plus_one$`, 'm'))
  const none = runCli(['profile', 'find', APP, '--status', '418'], env)
  t.equal(none.status, 1, 'nothing found: exit 1')
  t.equal(runCli(['profile', 'find', APP, '--flag', 'nope'], env).status, 2, 'an unknown flag: usage')

  // profile <token> --json: its flags and the figures of the profile page's menu
  const report = json(['profile', APP, tokens.books, '--json'])
  t.same(report.profile.flags, ['n_plus_one'])
  const profilePage = await (await fetch(`${base}/_profiler/${tokens.books}?panel=db`)).text()
  for (const panel of report.profile.panels as Array<{ name: string, figure: string | null }>) {
    if (panel.figure === null) continue
    t.match(profilePage, new RegExp(`data-panel="${panel.name}"[^>]*><span>[^<]*</span><span class="badge[^"]*">${panel.figure.replace(/[()+.]/g, '\\$&')}</span>`), `${panel.name}: ${panel.figure}, as the page's menu`)
  }

  // triage: the N+1 first
  const triage = json(['profile', 'triage', APP, tokens.books, '--json'])
  t.match(triage.findings[0], { kind: 'n_plus_one', origin: { file: APP, line: fixtureLine('// the N+1') } })
  const triageText = runCli(['profile', 'triage', APP, tokens.books], env)
  t.match(triageText.stdout, '1. [warning] Likely N+1: 5 SQL statements of one shape, 5 sets of values (5×,')
  t.match(triageText.stdout, `at ${APP}:${fixtureLine('// the N+1')}\n   SELECT name FROM authors WHERE id = $1\n`, 'a person reads the statement as it is')

  // diff: the statements from N+1 to 2; the compare page says the same
  const diff = json(['profile', 'diff', APP, tokens.books, tokens.fixed, '--json'])
  const db = diff.panels.find((p: Structured) => p.panel === 'db')
  t.same(db.measures.find((m: Structured) => m.name === 'statements'), { name: 'statements', a: 6, b: 2, delta: -4 })
  const comparePage = await (await fetch(`${base}/_profiler/compare?t=${tokens.books}&t=${tokens.fixed}`)).text()
  t.match(comparePage, /<tr data-measure="db-statements"><td>statements<\/td><td>6<\/td><td>2<\/td><td[^>]*>-4<\/td><\/tr>/, 'the compare page shows the same figures')
  t.match(runCli(['profile', 'diff', APP, tokens.books, tokens.fixed], env).stdout, 'Database: statements 6 → 2')
  t.equal(runCli(['profile', 'diff', APP, tokens.books, 'abcdef'], env).status, 1, 'an unknown token: exit 1')

  const all = [issues, exception, report, triage, diff].map((value) => JSON.stringify(value)).join('\n')
  for (const secret of SECRETS) t.notOk(all.includes(secret), `${secret} is in no output`)
})
