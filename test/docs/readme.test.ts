/**
 * The README is the package's front page: at most 320 lines (details go to docs/), and its quick
 * start is two commands on a fresh machine, one starting the service, one running the tests.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { root } from '../build-once.js'
import { examplesOf, shellLines, SHELL_LANGUAGES } from './examples.js'
import { codeBlocks } from './markdown.js'

const MAX_LINES = 320
const QUICK_START = ['npm ci && npm start', 'npm test']

const readme = readFileSync(join(root, 'README.md'), 'utf8')
const lines = readme.split('\n')

t.test(`the README has at most ${MAX_LINES} lines`, async (t) => {
  const count = readme.endsWith('\n') ? lines.length - 1 : lines.length
  t.ok(count <= MAX_LINES, `README.md: ${count} lines (details belong in docs/)`)
})

/** The commands of the README's code blocks between two lines (1-based, end excluded). */
function commandsBetween (from: number, to: number): string[] {
  return codeBlocks('README.md')
    .filter((block) => block.line > from && block.line < to)
    .flatMap((block) => {
      if (block.lang === 'console') {
        const examples = examplesOf(block)
        return typeof examples === 'string' ? [examples] : examples.map((example) => example.command)
      }
      return block.lang !== undefined && SHELL_LANGUAGES.has(block.lang) ? shellLines(block) : []
    })
}

t.test('the quick start is two commands: the service on its embedded defaults, the tests', async (t) => {
  const start = lines.indexOf('## Quick start') + 1
  t.ok(start > 0, 'the README has a "## Quick start" section')
  const next = lines.findIndex((line, index) => index >= start && /^## /.test(line)) + 1
  const end = next > 0 ? next : lines.length + 1
  t.same(commandsBetween(start, end), QUICK_START, 'exactly these two commands, nothing else to run')
  t.match(lines.slice(start, end - 1).join('\n'), /No external server is needed/, 'and it says no server is needed')
})
