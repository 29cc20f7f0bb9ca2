/**
 * The package as an app imports it: a small runtime surface, subpaths for what only some apps
 * use, and nothing of an unconfigured feature loaded.
 */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { readFileSync, existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { root } from '../build-once.js'

/** The runtime names a module of the built package exports, sorted. */
function exportsOf (file: string): string[] {
  const script = `const m = await import(${JSON.stringify(join(root, file))}); console.log(JSON.stringify(Object.keys(m).sort()))`
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as string[]
}

t.test('the package entry exports a small runtime surface; the rest are types', async (t) => {
  const names = exportsOf('dist/index.js')
  t.same(names, ['Priority', 'Stage', 'StageChannel', 'createKernelApp', 'default', 'dump', 'errorCodes', 'kernel', 'kernelServerOptions'])
  t.ok(names.length <= 20, `${names.length} runtime exports (at most 20)`)
})

t.test('subpaths: HTTP and security exceptions, security helpers, session stores, the OpenTelemetry span processor, the storage contract, the JSON Schema of a profile', async (t) => {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, { types: string, import: string } | string> }
  t.same(Object.keys(manifest.exports), ['.', './exceptions', './security', './session', './opentelemetry', './testing', './profile.schema.json', './package.json'])
  // a clean checkout type-checks its tests before any build: each subpath maps to its source there
  const testConfig = readFileSync(join(root, 'tsconfig.test.json'), 'utf8')
  for (const [path, target] of Object.entries(manifest.exports)) {
    if (typeof target === 'string') continue
    t.ok(existsSync(join(root, target.import)), `${path}: ${target.import} is built`)
    t.ok(existsSync(join(root, target.types)), `${path}: ${target.types} is built`)
    const source = target.import.replace(/^\.\/dist\//, './').replace(/\.js$/, '.ts')
    t.ok(testConfig.includes(`"${join('fastify-kernel', path)}": ["${source}"]`), `${path}: tsconfig.test.json maps it to ${source}`)
  }
  t.same(exportsOf((manifest.exports['./exceptions'] as { import: string }).import), [
    'AccessDeniedException', 'AccessDeniedHttpException', 'AuthenticationException', 'BadCredentialsException', 'BadRequestHttpException',
    'HttpException', 'InsufficientAuthenticationException', 'InvalidCsrfTokenException', 'MethodNotAllowedException', 'MethodNotAllowedHttpException',
    'NotFoundHttpException', 'RequestTimeoutHttpException', 'ResourceNotFoundException', 'ServiceUnavailableHttpException', 'SuspiciousOperationException',
    'TooManyLoginAttemptsAuthenticationException', 'TooManyRequestsHttpException', 'UnauthorizedHttpException', 'UriTooLongHttpException'
  ])
  t.same(exportsOf((manifest.exports['./security'] as { import: string }).import), [
    'DEFAULT_SCRYPT_PARAMS', 'IS_AUTHENTICATED', 'InMemoryUserProvider', 'PUBLIC_ACCESS', 'RoleHierarchy', 'hashPassword', 'hashToken', 'parsePasswordHash', 'verifyPassword'
  ])
  t.same(exportsOf((manifest.exports['./session'] as { import: string }).import), ['GuardedSessionStore', 'MIN_SECRET_LENGTH', 'MemorySessionStore'])
  t.same(exportsOf((manifest.exports['./opentelemetry'] as { import: string }).import), ['KernelSpanProcessor', 'RECORDED_BY_CHANNELS'])
  // the suite an app runs against its own storage: no test framework comes with it
  const testing = (manifest.exports['./testing'] as { import: string }).import
  t.same(exportsOf(testing), ['profileStorageContract'])
  // its entry hands on the contract (and, for types alone, the panels' declarations), which imports nothing at run time
  const entry = readFileSync(join(root, testing), 'utf8')
  const handed = [...entry.matchAll(/\bfrom ['"](\.[^'"]+)['"]/g)].map((match) => match[1])
  t.same(handed, ['./profiler/storage/contract.js'], 'the entry loads the contract alone at run time')
  t.notMatch(readFileSync(join(root, dirname(testing), handed[0]!), 'utf8'), /\bfrom ['"]|\bimport\(/, 'the testing subpath imports nothing else at run time')
})

/** The packages a process has loaded after registering the kernel with `options`. */
function loadedWith (options: object): string[] {
  const script = `
    import { createRequire } from 'node:module'
    const { default: Fastify } = await import('fastify')
    const { default: kernel } = await import(${JSON.stringify(join(root, 'dist/index.js'))})
    const app = Fastify()
    await app.register(kernel, ${JSON.stringify(options)})
    await app.ready()
    const cache = createRequire(import.meta.url).cache
    console.log(JSON.stringify(Object.keys(cache)))
    await app.close()`
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: root })) as string[]
}

// CommonJS packages, so the CommonJS module cache tells whether they were loaded
const SECURITY_AND_SESSION = ['@fastify/session', '@fastify/csrf-protection', '@fastify/flash', '@fastify/formbody', 'rate-limiter-flexible']

t.test('an app pays only for what it configures: without session and security, none of their dependencies is loaded', async (t) => {
  const plain = loadedWith({ debug: false })
  for (const name of SECURITY_AND_SESSION) t.notOk(plain.some((path) => path.includes(`/node_modules/${name}/`)), `${name} is not loaded`)
  t.notOk(plain.some((path) => path.includes('/node_modules/proper-lockfile/')), 'nor the profiler\'s file storage, in production')
  const secured = loadedWith({ debug: false, session: { secret: 'x'.repeat(40) }, security: { firewalls: [{ name: 'main', httpBasic: { realm: 'x' } }] } })
  for (const name of ['@fastify/session', '@fastify/flash', 'rate-limiter-flexible']) t.ok(secured.some((path) => path.includes(`/node_modules/${name}/`)), `with them configured, ${name} is`)
})
