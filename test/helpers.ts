import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import { createKernelApp } from '../index.js'
import type { KernelOptions } from '../index.js'
import type { Profiler } from '../src/profiler/profiler.js'

/**
 * The tests' apps keep their profiles in memory unless a test names a storage (or a folder):
 * the default, the file storage under the app's root, is one folder for every process of the
 * app, and every test file is one of its processes here; a test that lists profiles would list
 * the others'. The tests of the default use it as an app does (test/profiler/processes.test.ts).
 */
export function withTestStorage (kernel: KernelOptions): KernelOptions {
  const profiler = kernel.profiler
  if (profiler === false) return kernel
  // and no lag pause unless the test sets one (test/profiler/guards.test.ts drives it with a lag
  // source of its own): a loaded machine's lag must not leave a test's page unprofiled
  if (profiler === undefined || profiler === true) return { ...kernel, profiler: { storage: 'memory', maxEventLoopDelay: false } }
  const lag = profiler.maxEventLoopDelay === undefined ? { maxEventLoopDelay: false as const } : {}
  if (profiler.storage !== undefined || profiler.directory !== undefined) return { ...kernel, profiler: { ...profiler, ...lag } }
  return { ...kernel, profiler: { ...profiler, storage: 'memory', ...lag } }
}

/** A kernel app with a small route table like the reference application's (profiles in memory unless the test says: `withTestStorage`). */
export async function buildApp (kernel: KernelOptions = { debug: true }, fastify: FastifyServerOptions = {}, more?: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const app = await createKernelApp({ kernel: withTestStorage(kernel), fastify })
  more?.(app)
  app.get('/', { config: { name: 'home' } }, async function home () { return 'home' })
  app.get('/hello/:name', { config: { name: 'hello' } }, async function hello (request) {
    return { name: (request.params as { name: string }).name }
  })
  app.route({ method: ['GET', 'POST'], url: '/form', config: { name: 'form' }, handler: async function form () { return 'form' } })
  app.put('/form', async () => 'put form')
  app.post('/only-post', async () => 'posted')
  app.get('/blog/', { config: { name: 'blog' } }, async () => 'blog')
  app.get('/about', async () => 'about')
  app.get('/items/:id(^\\d+$)', async (request) => ({ id: (request.params as { id: string }).id }))
  app.post('/items/:id(^\\d+$)', async () => 'item posted')
  app.get('/:_locale(^(en|fr)$)/contact', async () => 'contact')
  app.get('/boom', async function boom () { throw new Error('kaboom', { cause: new TypeError('inner failure') }) })
  await app.ready()
  return app
}

export const HOST = 'example.test'

/** The app's running profiler (debug mode): its storage and counts, for tests that read them. */
export function profilerOf (app: FastifyInstance): Profiler {
  // the app may run the compiled package (dist/), whose Profiler class is not this one
  if (!app.kernelProfiler.enabled) throw new Error('no profiler runs in this app')
  return app.kernelProfiler as Profiler
}

/**
 * A page without its source excerpts: the excerpts show the app's own code around each frame, and
 * which frames a stack holds depends on the Node line (Node 26 keeps the test's own `inject()` call
 * in an async stack, so a test file's lines, literals included, can be shown). Assertions that a
 * page says nothing of something look at what the page says, not at the code it quotes.
 */
export function withoutExcerpts (html: string): string {
  return html.replace(/<pre class="excerpt">[\s\S]*?<\/pre>/g, '')
}

/** A stored profile as text, without the source excerpts its exception frames keep (see withoutExcerpts). */
export function profileText (profile: unknown): string {
  return JSON.stringify(profile, (key, value: unknown) => key === 'excerpt' ? undefined : value)
}
