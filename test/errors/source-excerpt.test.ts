import t from 'tap'
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import ts from 'typescript'
import { buildApp, withoutExcerpts } from '../helpers.js'
import { profiled } from '../profiler/helpers.js'
import { buildOnce, root } from '../build-once.js'
import { excerptOf, isVendorFile } from '../../src/errors/source-excerpt.js'
import { originalPosition } from '../../src/errors/source-map.js'
import { fileLinker } from '../../src/errors/file-link.js'
import { explode } from './fixtures/throwing.js'

const host = 'example.test'
const fixture = resolve(import.meta.dirname, 'fixtures/throwing.ts')
const fixtureLines = readFileSync(fixture, 'utf8').split('\n')
const THROW_LINE = fixtureLines.findIndex((line) => line.includes('throw new Error')) + 1

/** The fixture compiled by TypeScript into a folder of its own: `throwing.mjs`, its map, and the source beside them. */
function compileFixture (): { dir: string, jsLine: number } {
  const dir = mkdtempSync(join(tmpdir(), 'kernel-excerpt-'))
  const out = ts.transpileModule(readFileSync(fixture, 'utf8'), {
    fileName: 'throwing.ts',
    compilerOptions: { sourceMap: true, module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 }
  })
  writeFileSync(join(dir, 'throwing.mjs'), out.outputText.replace(/\/\/# sourceMappingURL=\S+/, '//# sourceMappingURL=throwing.mjs.map'))
  writeFileSync(join(dir, 'throwing.mjs.map'), out.sourceMapText!)
  copyFileSync(fixture, join(dir, 'throwing.ts'))
  const jsLine = out.outputText.split('\n').findIndex((line) => line.includes('throw new Error')) + 1
  return { dir, jsLine }
}

t.test('excerptOf: the lines around one, numbered, that one marked; long lines cut', async (t) => {
  const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`)
  const excerpt = excerptOf(lines, 3)!
  t.same(excerpt.map((l) => l.number), [1, 2, 3, 4, 5, 6, 7, 8])
  t.same(excerpt.filter((l) => l.current).map((l) => l.text), ['line 3'])
  t.same(excerptOf(lines, 20)!.map((l) => l.number), [15, 16, 17, 18, 19, 20])
  t.equal(excerptOf(lines, 21), undefined, 'a line the file does not have: no excerpt')
  t.match(excerptOf(['x'.repeat(1000)], 1)![0].text, /^x{400}…$/)
})

t.test('fileLinker: Symfony\'s editor names, formats, and path mappings', async (t) => {
  t.equal(fileLinker('vscode')!('/app/src/a.ts', 12), 'vscode://file//app/src/a.ts:12')
  t.equal(fileLinker('phpstorm')!('/app/a.ts', 3), 'phpstorm://open?file=/app/a.ts&line=3')
  t.equal(fileLinker('myide://%f@%l')!('/x.ts', 1), 'myide:///x.ts@1')
  const mapped = fileLinker('phpstorm://open?file=%f&line=%l&/app/>/home/me/project/&/srv/>/opt/')!
  t.equal(mapped('/app/src/a.ts', 7), 'phpstorm://open?file=/home/me/project/src/a.ts&line=7', 'a container path opens the host copy')
  t.equal(mapped('/srv/b.ts', 1), 'phpstorm://open?file=/opt/b.ts&line=1')
  t.equal(mapped('/other/c.ts', 2), 'phpstorm://open?file=/other/c.ts&line=2')
  t.equal(fileLinker(undefined), undefined)
  t.equal(fileLinker(' '), undefined)
})

t.test('frames of node, dependencies and the kernel itself are vendor frames; the example service is an application', async (t) => {
  t.ok(isVendorFile('node:internal/process/task_queues'))
  t.ok(isVendorFile('/srv/app/node_modules/fastify/lib/route.js'))
  t.ok(isVendorFile(join(root, 'src/kernel/listeners/router.ts')))
  t.ok(isVendorFile(join(root, 'dist/plugins/kernel.js')))
  t.notOk(isVendorFile(join(root, 'service/src/example-app.ts')))
  t.notOk(isVendorFile(join(root, 'service/dist/example-app.js')))
  t.ok(isVendorFile(join(root, 'dist/index.js')), 'the package entry')
  t.ok(isVendorFile(join(root, 'dist/cli/main.js')))
  t.notOk(isVendorFile(join(root, 'test/helpers.ts')))
  t.notOk(isVendorFile('/srv/app/src/controller.ts'))
})

t.test('originalPosition maps a frame of compiled code to its TypeScript source', async (t) => {
  const { dir, jsLine } = compileFixture()
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  t.not(jsLine, THROW_LINE, 'the compiled line differs from the source line (else this test proves nothing)')
  const compiled = readFileSync(join(dir, 'throwing.mjs'), 'utf8').split('\n')[jsLine - 1]
  const position = originalPosition(join(dir, 'throwing.mjs'), jsLine, compiled.indexOf('throw') + 1)
  t.equal(position?.file, join(dir, 'throwing.ts'))
  t.equal(position?.line, THROW_LINE)
  t.equal(originalPosition(join(dir, 'throwing.ts'), 3, 1), null, 'a source file has no map: the frame stays')
  t.equal(originalPosition('node:internal/x', 1, 1), null)
  t.equal(originalPosition(join(dir, 'missing.js'), 1, 1), null)
})

t.test('debug page: an excerpt of each application frame, the throwing line marked and escaped, dependency frames folded', async (t) => {
  const app = await buildApp({ debug: true, fileLinkFormat: `vscode://file/%f:%l&${root}/>/host/project/` }, {}, (app) => {
    app.get('/explode', async function explodeController () { return explode() })
  })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/explode', headers: { host, accept: 'text/html' } })
  t.equal(res.statusCode, 500)
  const body = res.body
  const firstFrame = body.slice(body.indexOf('<li class="frame app">'), body.indexOf('</li>', body.indexOf('<li class="frame app">')))
  t.match(firstFrame, '<details open>', 'the first application frame is open')
  t.match(firstFrame, '<span class="fn">explode</span>')
  t.match(firstFrame, '<a class="file" href="vscode://file//host/project/test/errors/fixtures/throwing.ts:' + THROW_LINE + '">test/errors/fixtures/throwing.ts</a>',
    'path relative to the project root, linked to the editor through the path mapping')
  t.match(firstFrame, `<span class="src-line current"><span class="ln">${THROW_LINE}</span>  throw new Error(&#x60;exploded: \${explosion.reason}&#x60;)</span>`, 'the throwing line is highlighted')
  t.match(firstFrame, '&lt;script&gt;alert(&quot;excerpt&quot;)&lt;/script&gt;', 'source lines are escaped')
  t.notMatch(body, '<script>alert("excerpt")', 'never raw')
  t.match(firstFrame, `<span class="ln">${THROW_LINE - 5}</span>`, 'five lines before')
  const second = body.indexOf('<li class="frame app">', body.indexOf('<li class="frame app">') + 1)
  t.ok(second > 0, 'the controller frame is an application frame too')
  t.match(body.slice(second, body.indexOf('</li>', second)), /<details>\s*<summary><span class="fn">[^<]*explodeController/, 'later application frames are collapsed')
  t.match(body, /<li class="frame vendor">\s*<details>\s*<summary>\d+ framework and dependency frames<\/summary>/, 'dependency frames folded')
  t.match(body, /Stack trace \((\d+) frames/)
  t.ok(Number(/Stack trace \((\d+) frames/.exec(body)![1]) > 10, 'the whole stack, not V8\'s 10 frames')
})

t.test('whole stacks only while a debug app is open', async (t) => {
  const before = Error.stackTraceLimit
  const prod = await buildApp({ debug: false })
  t.equal(Error.stackTraceLimit, before, 'production leaves V8\'s limit alone')
  await prod.close()
  const app = await buildApp({ debug: true })
  t.equal(Error.stackTraceLimit, Infinity)
  const other = await buildApp({ debug: true })
  await app.close()
  t.equal(Error.stackTraceLimit, Infinity, 'still raised while another debug app is open')
  await other.close()
  t.equal(Error.stackTraceLimit, before, 'restored when the last one closes')
})

t.test('the profiler\'s exception panel shows the same excerpts; a cause without a status of its own is not labelled 500', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.get('/explode', async () => explode())
  })
  t.teardown(() => app.close())
  const { profile, token } = await profiled(app, { url: '/explode', headers: { accept: 'text/html' } })
  const frame = profile.collected.exception![0].trace.find((f) => f.function === 'explode')!
  t.equal(frame.display, 'test/errors/fixtures/throwing.ts')
  t.equal(frame.excerpt?.find((line) => line.current)?.number, THROW_LINE, 'the profile keeps the excerpt')
  const panel = await app.inject({ url: `/_profiler/${token}?panel=exception`, headers: { host } })
  t.match(panel.body, new RegExp(`<span class="src-line current"><span class="ln">${THROW_LINE}</span>`))
  t.match(panel.body, '&lt;script&gt;alert(')

  const chained = await profiled(app, { url: '/boom' })
  const page = await app.inject({ url: `/_profiler/${chained.token}?panel=exception`, headers: { host } })
  const outer = page.body.slice(page.body.indexOf('id="exception-1"'), page.body.indexOf('id="exception-2"'))
  const inner = page.body.slice(page.body.indexOf('id="exception-2"'))
  t.match(outer, '500 Internal Server Error', 'the response\'s status on the outermost')
  t.match(inner, 'TypeError')
  t.notMatch(withoutExcerpts(inner), 'Internal Server Error', 'the TypeError cause carries no status')

  const miss = await profiled(app, { url: '/nope' })
  const missPage = await app.inject({ url: `/_profiler/${miss.token}?panel=exception`, headers: { host } })
  t.notMatch(missPage.body.slice(missPage.body.indexOf('id="exception-2"')), /Internal Server Error|404 Not Found/, 'nor does the router\'s ResourceNotFoundException')
})

t.test('compiled code maps to its TypeScript source, with or without --enable-source-maps', async (t) => {
  buildOnce()
  const { dir, jsLine } = compileFixture()
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'run.mjs'), `
import { createKernelApp } from ${JSON.stringify(join(root, 'dist/index.js'))}
import { explode } from './throwing.mjs'
const app = await createKernelApp({ kernel: { debug: true, profiler: false } })
app.get('/fail', async () => explode())
const res = await app.inject({ url: '/fail', headers: { accept: 'text/html' } })
process.stdout.write(JSON.stringify({ body: res.body, file: res.headers['x-debug-exception-file'], sourceMaps: process.sourceMapsEnabled }))
await app.close()
`)
  // tap's process tracking adds a NODE_OPTIONS (whose loader enables source maps) to every child: `env -u` drops it
  for (const flags of [[], ['--enable-source-maps']]) {
    const output = JSON.parse(execFileSync('env', ['-u', 'NODE_OPTIONS', process.execPath, ...flags, 'run.mjs'], { cwd: dir, env: { PATH: process.env.PATH }, encoding: 'utf8' })) as { body: string, file: string, sourceMaps: boolean }
    const enabled = flags[0] === '--enable-source-maps'
    const label = enabled ? 'with --enable-source-maps' : 'without source maps'
    t.equal(output.sourceMaps, enabled, `${label} (process.sourceMapsEnabled: ${String(output.sourceMaps)})`)
    t.match(output.file, new RegExp(`throwing\\.ts:${THROW_LINE}$`), `${label}: X-Debug-Exception-File names the TypeScript line`)
    t.match(output.body, `<span class="file">throwing.ts</span> <span class="at">line</span> <span class="line">${THROW_LINE}</span>`, `${label}: the frame shows the source, relative to the project root`)
    t.match(output.body, new RegExp(`<span class="src-line current"><span class="ln">${THROW_LINE}</span>  throw new Error`), `${label}: the excerpt is the TypeScript source`)
    t.match(output.body, 'const markup: string &#x3D; ', `${label}: with its types`)
    t.notMatch(output.body, `line</span> <span class="line">${jsLine}</span>`)
  }
})
