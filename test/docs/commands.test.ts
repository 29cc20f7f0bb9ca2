/**
 * Every command the README and docs/*.md show runs here, and its output is compared with what
 * the docs show (examples.ts says how a command is written and what is normalised). The
 * examples that ask the service (`127.0.0.1:8000`) get it started with `npm start`; the
 * console's run against the service's app module. A shell block the harness cannot run fails.
 *
 * `UPDATE_DOCS=1 npx tap test/docs/commands.test.ts` writes each command's real output into
 * the docs instead (then read the diff).
 */
import t from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { root } from '../build-once.js'
import type { Example } from './examples.js'
import { asShown, examplesOf, normalise, rewritten, SERVICE_URL, shellLines, SHELL_LANGUAGES } from './examples.js'
import type { CodeBlock } from './markdown.js'
import { codeBlocks, codeSpans, docFiles } from './markdown.js'
import type { DocsService } from './run.js'
import { runCommand, startDocsService } from './run.js'

const update = process.env.UPDATE_DOCS === '1'
// the console's commands load the service's app, each through npx: a minute or so on a loaded machine
t.setTimeout(300_000)
const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string>, tap: { include: string[] } }
const ciRun = readFileSync(join(root, '.ci/run'), 'utf8')
const testRunner = readFileSync(join(root, '.ci/test.mjs'), 'utf8')

/**
 * The quick start's two commands are not run by this test, which `npm test` runs and which
 * `npm ci` would pull the ground from under: each is checked for what it stands for.
 */
const NOT_RUN_HERE: Record<string, { why: string, holds: () => boolean }> = {
  'npm ci && npm start': {
    why: 'CI installs with npm ci (on Node 24, the image\'s line) before npm test (.ci/run); this test starts the service with npm start, which builds first',
    holds: () => /^bash \.ci\/node-line\.sh 24 npm ci\b/m.test(ciRun) && /\bnpm run build\b/.test(packageJson.scripts.prestart) && packageJson.scripts.start.includes('service/dist/main.js')
  },
  'npm test': {
    why: 'the command running this test: tap over test/**/*.test.ts, after lint and typecheck, on Node 24 when the machine\'s is older than 22 (CI: on Node 24, .ci/run)',
    holds: () => packageJson.scripts.test === 'node .ci/test.mjs' && /spawnSync\('npx', \['tap'/.test(testRunner) && /'\.ci\/node-line\.sh', '24', 'npx', 'tap'/.test(testRunner) && packageJson.tap.include.includes('test/**/*.test.ts') && /^whole 24 npm test\b/m.test(ciRun)
  }
}

const where = (block: CodeBlock): string => `${block.file}:${block.line}`

const examples: Example[] = []
const blocks = docFiles().flatMap((file) => codeBlocks(file))

t.test('every code block says what it holds, and every shell block is one the harness runs', async (t) => {
  for (const block of blocks) {
    if (block.lang === undefined) {
      t.fail(`${where(block)}: a code block without a language: name it (console, ts, text, http…) so no command goes unchecked`)
      continue
    }
    if (block.lang === 'console') {
      const found = examplesOf(block)
      if (typeof found === 'string') t.fail(`${where(block)}: ${found}`)
      else examples.push(...found)
      continue
    }
    if (SHELL_LANGUAGES.has(block.lang)) {
      for (const line of shellLines(block)) {
        const known = NOT_RUN_HERE[line]
        if (known === undefined) t.fail(`${where(block)}: "${line}" is not run by the docs test: show it in a console block, "$ ${line}" followed by its output`)
        else t.ok(known.holds(), `${where(block)}: "${line}": ${known.why}`)
      }
      continue
    }
    const prompt = block.text.split('\n').find((line) => line.startsWith('$ '))
    if (prompt !== undefined) t.fail(`${where(block)}: "${prompt}" in a ${block.lang} block: commands go in console blocks`)
  }
  const commands = new Set(examples.map((example) => example.command))
  for (const file of docFiles()) {
    for (const span of codeSpans(file)) {
      // a runnable command in the text (not a usage such as `npx fastify-kernel routes <app>`,
      // nor an option named as `curl -u`) is one the docs run
      const runnable = /^curl .*:\/\//.test(span) || /^npx \S+ \S+/.test(span)
      if (runnable && !/[<…]/.test(span) && !commands.has(span)) {
        t.fail(`${file}: \`${span}\` is not run by the docs test: show it in a console block too`)
      }
    }
  }
  for (const command of ['routes', 'match', 'listeners', 'hash-password']) {
    t.ok(examples.some((example) => example.command.startsWith(`npx fastify-kernel ${command} `)), `the console's ${command} is shown with its output`)
  }
  t.ok(examples.some((example) => SERVICE_URL.test(example.command)), 'and requests to the service')
})

t.test('each command prints what the docs show', async (t) => {
  let service: Promise<DocsService> | undefined
  t.teardown(async () => { await (await service)?.stop() })
  const run = async (example: Example): Promise<string> => {
    if (!SERVICE_URL.test(example.command)) return asShown((await runCommand(example.command)).output)
    service ??= startDocsService()
    const { port } = await service
    return asShown((await runCommand(example.command.replace(new RegExp(SERVICE_URL.source, 'g'), `$1:${port}`))).output, port)
  }
  // the service's examples in the docs' order, one after the other (a login throttled by one
  // shows in the next); the others, which each load the app afresh, two at a time beside them
  const asking = examples.filter((example) => SERVICE_URL.test(example.command))
  const others = examples.filter((example) => !SERVICE_URL.test(example.command))
  const outputs = new Map<Example, string>()
  const lane = async (queue: Example[]): Promise<void> => {
    for (let example = queue.shift(); example !== undefined; example = queue.shift()) outputs.set(example, await run(example))
  }
  await Promise.all([lane([...asking]), lane(others), lane(others)])
  if (update) {
    writeBack(outputs)
    return
  }
  for (const example of examples) {
    t.equal(normalise(outputs.get(example)!), normalise(example.expected), `${example.file}:${example.line} $ ${example.command}`)
  }
})

/** UPDATE_DOCS=1: each console block rewritten with the outputs of this run. */
function writeBack (outputs: Map<Example, string>): void {
  for (const file of docFiles()) {
    let source = readFileSync(join(root, file), 'utf8')
    for (const block of codeBlocks(file).filter((block) => block.lang === 'console')) {
      const found = examplesOf(block)
      if (typeof found === 'string') continue
      const lines = found.flatMap((example) => {
        const ran = [...outputs].find(([done]) => done.file === file && done.line === example.line)
        return ran === undefined ? [...example.written, ...example.expected.split('\n')] : rewritten(example, ran[1])
      })
      const fence = block.raw.split('\n')
      const closing = block.raw.trimEnd().split('\n').at(-1)!
      const written = `${fence[0]}\n${lines.join('\n')}\n${closing}${block.raw.endsWith('\n') ? '\n' : ''}`
      source = source.replace(block.raw, () => written)
    }
    writeFileSync(join(root, file), source)
  }
}
