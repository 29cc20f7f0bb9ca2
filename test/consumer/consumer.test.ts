/**
 * The package as a new user gets it: `npm pack`, installed into a fresh TypeScript app next to
 * the real @fastify/cors, helmet, cookie, swagger and swagger-ui from the registry, compiled under
 * `strict` with `skipLibCheck: false`, then exercised in both registration orders.
 */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { FastifyInstance } from 'fastify'
import semver from 'semver'
import { buildOnce, root } from '../build-once.js'

interface NpmTree { path?: string, dependencies?: Record<string, NpmTree> }

const host = 'consumer.test'

/** The folder of every package below a node of `npm ls --json --long`. */
function packagesOf (node: NpmTree | undefined, found = new Set<string>()): Set<string> {
  for (const child of Object.values(node?.dependencies ?? {})) {
    if (child.path === undefined || found.has(child.path)) continue
    found.add(child.path)
    packagesOf(child, found)
  }
  return found
}

// packing, installing from the registry and three compilations (the app, the docs' snippets, the session types): two minutes or more on a loaded machine
t.setTimeout(300_000)
const fixture = resolve(import.meta.dirname, 'fixture')
const work = mkdtempSync(join(tmpdir(), 'kernel-consumer-'))
t.teardown(() => rmSync(work, { recursive: true, force: true }))
const run = (command: string, args: string[], cwd: string): string =>
  execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } })

/** What a test snippet refers to without defining it: tap's `t`, as much of it as the README's example uses. */
const TEST_OBJECT = 'declare const t: { ok: (value: unknown, message?: string) => void, equal: (actual: unknown, expected: unknown, message?: string) => void }'

/**
 * Every ```ts block of a doc as a source file of the app, the first one that builds an app under
 * `name`, verbatim; a fragment that uses the app, the kernel plugin, what an earlier snippet
 * exports (or a test's `t`) without defining them gets their imports (or the declaration of `t`)
 * above it, as the file it would live in has.
 */
function snippetFiles (file: string, name: string): Array<{ path: string, source: string }> {
  const blocks = [...readFileSync(join(root, file), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1])
  const program = blocks.findIndex((block) => /^export const app\b/m.test(block))
  if (program === -1) throw new Error(`${file}: no snippet builds an app`)
  const pathOf = (index: number): string => index === program ? `${name}.ts` : `${name}-${index + 1}.ts`
  // what an earlier snippet exports (a panel's integration, say), which a later one uses as the page does
  const exported = blocks.flatMap((block, index) => [...block.matchAll(/^export (?:const|function|class) (\w+)/gm)].map((match) => ({ name: match[1], index })))
  return blocks.map((block, index) => {
    if (index === program) return { path: pathOf(index), source: `// ${file}'s app, verbatim\n${block}` }
    const preamble = [`// ${file}'s snippet ${index + 1}, verbatim (but for an OpenTelemetry import) below what it refers to`]
    if (/\bapp\./.test(block) && !/\b(const|let|var) app\b/.test(block)) preamble.push(`import { app } from './${name}.js'`)
    // the kernel plugin, used (not as `app.kernel`, nor in a string or a comment) and not imported
    const code = block.replace(/\/\/.*$/gm, '').replace(/'[^'\n]*'/g, "''")
    if (/(?<![.\w])kernel\b(?!\.)/.test(code) && !/^import kernel\b/m.test(block)) preamble.push('import kernel from \'fastify-kernel\'')
    for (const earlier of exported) {
      if (earlier.name !== 'app' && earlier.index < index && new RegExp(`\\b${earlier.name}\\b`).test(block) && !new RegExp(`^export (?:const|function|class) ${earlier.name}\\b`, 'm').test(block)) {
        preamble.push(`import { ${earlier.name} } from './${pathOf(earlier.index).replace(/\.ts$/, '.js')}'`)
      }
    }
    if (/^\s*t\.\w+\(/m.test(block)) preamble.push(TEST_OBJECT)
    // the OpenTelemetry subpath needs the app's own OpenTelemetry (an optional peer), which this app does not install
    const source = block.split('\n').filter((line) => !line.includes("from 'fastify-kernel/opentelemetry'")).join('\n')
    return { path: pathOf(index), source: `${preamble.join('\n')}\nexport {}\n${source}` }
  })
}

/** The first ```ts block under a heading of a doc: the README's plugin snippet, the getting started's fuller app. */
function snippet (file: string, heading: string, language = 'ts'): string {
  const text = readFileSync(join(root, file), 'utf8')
  const section = text.slice(text.indexOf(heading))
  const match = new RegExp(`\`\`\`${language}\n([\\s\\S]*?)\`\`\``).exec(section)
  if (!text.includes(heading) || match === null) throw new Error(`${file}: no ${language} snippet under "${heading}"`)
  return match[1]
}

buildOnce()
run('npm', ['pack', '--ignore-scripts', '--pack-destination', work, '--silent'], root)
const tarball = join(work, readdirSync(work).find((f) => f.endsWith('.tgz'))!)
const app = join(work, 'app')
cpSync(fixture, app, { recursive: true, filter: (source) => !source.includes('node_modules') && !source.includes('/dist') })
// every TypeScript snippet of the README and the getting started page, compiled in a program of their
// own (snippets/: what one imports, `fastify-kernel/session`'s typings, must not reach the app's type checks);
// the two apps also in the app's src/, where the tests below run them
const snippetSources = [...snippetFiles('README.md', 'readme-snippet'), ...snippetFiles('docs/getting-started.md', 'getting-started-snippet')]
for (const { path, source } of snippetSources) writeFileSync(join(app, 'snippets', path), source)
for (const name of ['readme-snippet.ts', 'getting-started-snippet.ts']) cpSync(join(app, 'snippets', name), join(app, 'src', name))
writeFileSync(join(app, 'src', 'getting-started-panel.ts'), '// docs/getting-started.md\'s panel with its own capture (flags.ts), verbatim\n' + snippet('docs/getting-started.md', '### A panel with its own capture'))
run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--no-save', tarball], app)

t.test('the package: a plugin with fastify as a peer, no service, a licence, links that resolve', async (t) => {
  const manifest = JSON.parse(readFileSync(join(app, 'node_modules/fastify-kernel/package.json'), 'utf8'))
  t.equal(manifest.peerDependencies?.fastify, '^5.5.0')
  // OpenTelemetry is an optional peer, for the `fastify-kernel/opentelemetry` subpath only: this app (which
  // runs every test below) has none of it
  for (const name of ['@opentelemetry/api', '@opentelemetry/sdk-trace-base']) t.same(manifest.peerDependenciesMeta?.[name], { optional: true }, `${name} is optional`)
  t.notOk(existsSync(join(app, 'node_modules/@opentelemetry')), 'no OpenTelemetry package is installed')
  t.notOk(manifest.dependencies?.fastify, 'fastify is not a dependency: one copy, the app\'s')
  for (const serviceOnly of ['pino-pretty', 'env-schema', 'dotenv', 'close-with-grace']) t.notOk(manifest.dependencies?.[serviceOnly], `${serviceOnly} belongs to the service`)
  t.equal(manifest.bin?.['fastify-kernel'], './dist/cli/bin.js')
  const installed = join(app, 'node_modules/fastify-kernel')
  t.ok(existsSync(join(installed, 'LICENSE')))
  t.notOk(existsSync(join(installed, 'dist/service')), 'the example service is not shipped')
  t.notOk(existsSync(join(installed, 'service')), 'the example service is not shipped')
  t.notOk(readdirSync(join(app, 'node_modules')).includes('pino-pretty'), 'no service dependency is installed')
  t.equal(readdirSync(join(app, 'node_modules/fastify-kernel/node_modules')).includes('fastify'), false, 'no second fastify')

  // every package the plugin brings supports the Node it says it runs on (`engines` does not lie)
  const tree = JSON.parse(run('npm', ['ls', '--all', '--json', '--long', '--omit=dev'], app)) as NpmTree
  const brought = packagesOf(tree.dependencies?.['fastify-kernel'])
  t.ok(brought.size > 5, `${brought.size} packages come with the plugin`)
  const oldest = semver.minVersion(manifest.engines.node)!.version
  for (const folder of brought) {
    const { name, engines } = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { name: string, engines?: { node?: string } }
    if (engines?.node !== undefined && !semver.satisfies(oldest, engines.node)) t.fail(`${name} needs Node ${engines.node}, the package says ${manifest.engines.node}`)
  }

  // README links point at files inside the package
  const readme = readFileSync(join(installed, 'README.md'), 'utf8')
  for (const [, target] of readme.matchAll(/\]\(((?!https?:|#|mailto:)[^)\s]+)\)/g)) {
    const file = target.split('#')[0]
    t.ok(existsSync(join(installed, file)), `README link ${target} resolves in the package`)
  }
  // source maps carry their sources: no map names a file the package does not have
  const maps = readdirSync(join(installed, 'dist'), { recursive: true }).map(String).filter((f) => f.endsWith('.js.map'))
  t.ok(maps.length > 0)
  for (const map of maps) {
    const parsed = JSON.parse(readFileSync(join(installed, 'dist', map), 'utf8')) as { sources: string[], sourcesContent?: Array<string | null> }
    const embedded = parsed.sourcesContent?.length === parsed.sources.length && parsed.sourcesContent.every((s) => typeof s === 'string')
    if (!embedded) t.fail(`${map} names sources it does not carry`)
    // and the package ships them: a kernel frame's file and editor link point at a real file
    for (const source of parsed.sources) {
      const shipped = resolve(dirname(join(installed, 'dist', map)), source)
      if (!existsSync(shipped)) t.fail(`${map} maps to ${source}, which the package does not ship`)
    }
  }
})

t.test('the app compiles under strict with skipLibCheck off; typos are type errors', async (t) => {
  const tsc = join(root, 'node_modules/typescript/bin/tsc')
  /** What tsc reports for one of the app's projects: nothing when it compiles. */
  const compile = (project: string): string => {
    try {
      return run(process.execPath, [tsc, '-p', project], app).trim()
    } catch (error) {
      return String((error as { stdout?: string }).stdout ?? error).trim()
    }
  }
  t.equal(compile(app), '', 'tsc reports nothing (an unused @ts-expect-error would be reported too)')
  t.ok(existsSync(join(app, 'dist/app.js')))
  // the README's and the getting started page's snippets, its test example among them: the panels' data is typed from the entry
  t.ok(snippetSources.length >= 5, `${snippetSources.length} snippets: ${snippetSources.map((file) => file.path).join(', ')}`)
  t.ok(snippetSources.some((file) => file.source.includes('profile.collected.db!.statements')), 'the README\'s test example is one')
  t.equal(compile(join(app, 'snippets')), '', 'the docs\' snippets compile against the installed package')
  t.equal(compile(join(app, 'session-types')), '', "with `import type {} from 'fastify-kernel/session'`, flash and CSRF tokens are typed")
})

t.test('fastify-kernel/testing: the app holds its own storage to the contract, then the kernel stores its profiles there', async (t) => {
  interface StorageModule {
    checkStorage: () => Promise<{ passed: number, failed: string[] }>
    ArrayStorage: new (settings: { maxProfiles: number, maxAgeMs: number, clock: { now: () => number, monotonic: () => number } }) => { size: number }
    appWithStorage: (storage: object) => Promise<FastifyInstance>
  }
  const { checkStorage, ArrayStorage, appWithStorage } = await import(pathToFileURL(join(app, 'dist/storage-contract.js')).href) as StorageModule
  const { passed, failed } = await checkStorage()
  t.same(failed, [], 'the app\'s storage keeps every rule, run without a test framework')
  t.ok(passed > 50, `${passed} checks passed`)
  const storage = new ArrayStorage({ maxProfiles: 10, maxAgeMs: 60_000, clock: { now: () => Date.now(), monotonic: () => performance.now() } })
  const withStorage = await appWithStorage(storage)
  t.teardown(() => withStorage.close())
  const res = await withStorage.inject({ url: '/', headers: { host } })
  const token = String(res.headers['x-debug-token'])
  t.match(token, /^[0-9a-f]{6}$/)
  await (withStorage as unknown as { kernelProfiler: { profileOf: (token: string) => Promise<unknown> } }).kernelProfiler.profileOf(token)
  t.equal(storage.size, 1, 'stored in the app\'s storage')
  t.equal((await withStorage.inject({ url: `/_profiler/${token}`, headers: { host } })).statusCode, 200, 'and shown')
})

interface ConsumerModule { build: (order: 'kernel first' | 'kernel last', debug: boolean) => Promise<FastifyInstance> }
const origin = 'https://front.test'

for (const order of ['kernel first', 'kernel last'] as const) {
  t.test(`${order}: exact routing errors among the ecosystem's plugins`, async (t) => {
    const { build } = await import(pathToFileURL(join(app, 'dist/app.js')).href) as ConsumerModule
    const debug = await build(order, true)
    const prod = await build(order, false)
    t.teardown(async () => { await debug.close(); await prod.close() })

    const miss = await debug.inject({ url: '/nope', headers: { host, origin, accept: 'application/json', referer: 'https://front.test/page' } })
    t.equal(miss.statusCode, 404)
    // the frame where the router raised it: a file the installed package has
    const [raisedIn] = decodeURIComponent(String(miss.headers['x-debug-exception-file'])).split(/:(?=\d+$)/)
    t.match(raisedIn, /node_modules\/fastify-kernel\/src\/routing\/router\.ts$/)
    t.ok(existsSync(raisedIn), `${raisedIn} exists: excerpts and editor links work from node_modules`)
    t.equal(miss.json().detail, 'No route found for "GET http://consumer.test/nope" (from "https://front.test/page")')
    const put = await debug.inject({ method: 'PUT', url: '/items', headers: { host, origin, accept: 'application/json' } })
    t.equal(put.statusCode, 405)
    t.equal(put.headers.allow, 'GET, POST', 'no OPTIONS from the preflight route')
    t.equal(put.json().detail, 'No route found for "PUT http://consumer.test/items": Method Not Allowed (Allow: GET, POST)')
    const slash = await prod.inject({ url: '/blog?page=2', headers: { host, origin } })
    t.equal(slash.statusCode, 301)
    t.equal(slash.headers.location, 'http://consumer.test/blog/?page=2')

    for (const res of [miss, put, slash, await prod.inject({ url: '/nope', headers: { host, origin, accept: 'text/html' } })]) {
      t.equal(res.headers['x-content-type-options'], 'nosniff', `${res.statusCode}: helmet's header`)
      t.match(res.headers['content-security-policy'], /default-src 'self'/, `${res.statusCode}: helmet's CSP`)
      t.equal(res.headers['access-control-allow-origin'], origin, `${res.statusCode}: cors's header`)
      t.equal(res.headers['x-consumer-listener'], 'kernel.response', `${res.statusCode}: the app's kernel.response listener`)
    }
    const page = await prod.inject({ url: '/nope', headers: { host, origin, accept: 'text/html' } })
    t.match(page.body, 'Oops! An Error Occurred')
    const vary = String(page.headers.vary).toLowerCase().split(/\s*,\s*/)
    t.ok(vary.includes('origin') && vary.includes('accept'), `Vary has Origin and Accept: ${String(page.headers.vary)}`)

    const preflight = await prod.inject({ method: 'OPTIONS', url: '/items', headers: { host, origin, 'access-control-request-method': 'POST' } })
    t.equal(preflight.statusCode, 204)
    const docs = await prod.inject({ url: '/documentation/json', headers: { host } })
    t.equal(docs.statusCode, 200)
    t.ok(docs.json().paths['/items'], 'swagger documents the app routes')
    t.notOk(Object.keys(docs.json().paths).some((path: string) => path.startsWith('/_profiler')), 'and never the profiler')
    const invalid = await prod.inject({ method: 'POST', url: '/items', headers: { host, accept: 'application/json' }, payload: { nope: true } })
    t.equal(invalid.statusCode, 400)
    const created = await prod.inject({ method: 'POST', url: '/items', headers: { host }, payload: { name: 'x' } })
    t.same(created.json(), { created: 'x' })

    const whoami = await prod.inject({ url: '/whoami', headers: { host, 'accept-language': 'fr-CH' } })
    t.same(whoami.json(), { locale: 'fr', route: 'get_whoami', user: null })
    const closed = await prod.inject({ url: '/closed', headers: { host, accept: 'application/json' } })
    t.equal(closed.statusCode, 403, 'fastify-kernel/exceptions: a thrown AccessDeniedHttpException is a 403')
    const admin = await prod.inject({ url: '/admin', headers: { host } })
    t.equal(admin.statusCode, 401)
    t.equal(admin.headers['www-authenticate'], 'Basic realm="Consumer"')
    t.equal(admin.headers['x-content-type-options'], 'nosniff', 'the firewall\'s answer keeps helmet\'s headers too')
    const authorized = await prod.inject({ url: '/admin', headers: { host, authorization: 'Basic ' + Buffer.from('admin:admin').toString('base64') } })
    t.same(authorized.json(), { user: 'admin' })
    t.equal((await prod.inject({ url: '/api/users/7', headers: { host } })).json().id, '7')
  })
}

t.test("the README's plugin snippet compiled and runs", async (t) => {
  const compiled = join(app, 'dist/readme-snippet.js')
  t.ok(existsSync(compiled))
  mkdirSync(dirname(compiled), { recursive: true })
  const module = await import(pathToFileURL(compiled).href) as { app?: FastifyInstance }
  t.ok(module.app, 'the snippet exports its app')
  if (module.app === undefined) return
  await module.app.ready()
  t.equal((await module.app.inject({ url: '/hello/reader' })).statusCode, 200)
  t.equal((await module.app.inject({ method: 'DELETE', url: '/hello/reader' })).statusCode, 405)
  await module.app.close()
})

t.test("docs/getting-started.md's fuller app compiled and runs as the page says", async (t) => {
  const { app: fuller } = await import(pathToFileURL(join(app, 'dist/getting-started-snippet.js')).href) as { app?: FastifyInstance }
  t.ok(fuller, 'the example exports its app')
  if (fuller === undefined) return
  await fuller.ready()
  t.teardown(() => fuller.close())
  t.same((await fuller.inject('/items/12')).json(), { id: '12' })
  t.equal((await fuller.inject('/items/twelve')).statusCode, 404, 'the requirement holds')
  const miss = await fuller.inject({ url: '/api/nope', headers: { accept: 'text/html' } })
  t.equal(miss.statusCode, 404)
  t.match(miss.json(), { statusCode: 404, error: 'Not Found', message: /^No route found for "GET / }, 'a miss under /api is JSON in Fastify\'s shape, whatever the client accepts')
  const maintenance = await fuller.inject({ url: '/hello/reader', headers: { 'x-maintenance': '1' } })
  t.equal(maintenance.statusCode, 503)
  t.equal(maintenance.headers['retry-after'], '60')
  t.equal(maintenance.body, 'Back soon')
})

t.test("docs/getting-started.md's panel with its own capture: two files and one option, compiled and run", async (t) => {
  const compiled = join(app, 'dist/getting-started-panel.js')
  // its template beside it, as the page says (flags.hbs)
  writeFileSync(join(dirname(compiled), 'flags.hbs'), snippet('docs/getting-started.md', '### A panel with its own capture', 'handlebars'))
  const { featureFlags, isOn } = await import(pathToFileURL(compiled).href) as { featureFlags: object, isOn: (flag: string) => boolean }
  // the installed package, the app's own Fastify under it
  const { createKernelApp } = await import(pathToFileURL(join(app, 'node_modules/fastify-kernel/dist/index.js')).href) as { createKernelApp: (options: { kernel: object }) => Promise<FastifyInstance> }
  const flagged = await createKernelApp({ kernel: { debug: true, profiler: { integrations: [featureFlags] } } })
  flagged.get('/checkout', async () => ({ newCheckout: isOn('new-checkout'), dark: isOn('dark-mode') }))
  t.teardown(() => flagged.close())
  const res = await flagged.inject({ url: '/checkout', headers: { host } })
  const profile = await flagged.kernelProfiler.profileOf(res)
  t.same(profile.collected.flags, [{ flag: 'new-checkout', on: true }, { flag: 'dark-mode', on: false }], 'the reads of the request, in its profile')
  const panel = await flagged.inject({ url: `/_profiler/${profile.token}?panel=flags`, headers: { host } })
  t.match(panel.body, '<h2>Feature flags</h2><table><tr><td>new-checkout</td><td>true</td></tr><tr><td>dark-mode</td><td>false</td></tr></table>', 'its panel, from its template')
})
