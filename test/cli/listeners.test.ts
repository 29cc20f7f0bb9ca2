import t from 'tap'
import { fixture, runCli } from './run-cli.js'
import type { ListenerDescription } from '../../plugins/console.js'

t.test('listeners: every stage\'s listeners in the order they run, with priority and origin', async (t) => {
  const { status, stdout, stderr } = runCli(['listeners', fixture('build-app.mjs')])
  t.equal(status, 0, stderr)
  const lines = stdout.split('\n')
  t.equal(lines[0], 'kernel.request', 'stages as headings, in lifecycle order')
  t.match(lines[1], /^ {2}Order +Listener +Priority +Origin$/)
  t.match(lines[2], /^ {2}#1 +router +32 +kernel$/)
  const exception = lines.indexOf('kernel.exception')
  t.ok(exception > lines.indexOf('kernel.controller_arguments'), 'kernel.exception after the controller stages')
  t.match(lines[exception + 2], /#1 +exception logger +0 +kernel/)
  t.match(lines[exception + 3], /#2 +error controller +-128 +kernel/, 'the error controller runs last')
  t.match(stdout, /access check +0 +security/, 'the route access check, added with the first isGranted route')
  t.notOk(stdout.includes('\u001b['), 'no colours when piped')
})

t.test('listeners --json, one stage; an unknown stage is refused', async (t) => {
  const json = runCli(['listeners', fixture('build-app.mjs'), 'kernel.exception', '--json'])
  t.equal(json.status, 0, json.stderr)
  t.same(JSON.parse(json.stdout) as ListenerDescription[], [
    { stage: 'kernel.exception', name: 'exception logger', priority: 0, origin: 'kernel' },
    { stage: 'kernel.exception', name: 'error controller', priority: -128, origin: 'kernel' }
  ])
  const unknown = runCli(['listeners', fixture('build-app.mjs'), 'kernel.requets'])
  t.equal(unknown.status, 2)
  t.match(unknown.stderr, 'unknown stage "kernel.requets"')
  const none = runCli(['listeners', fixture('build-app.mjs'), 'kernel.terminate'])
  t.equal(none.status, 1, 'a stage without listeners: exit 1')
})
