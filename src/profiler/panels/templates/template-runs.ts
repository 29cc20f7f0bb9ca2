import { createRequire } from 'node:module'
import { sep } from 'node:path'
import { currentSpans } from '../../spans.js'
import type { SpanList } from '../../spans.js'
import { ProcessShare } from '../../instrument/process-share.js'

/**
 * What a render ran, as a tree: its page, then its layout, each with the partials it included
 * (and theirs), each name counted once per parent with its runs and their time. Plain data, the
 * render span's `tree`.
 */
export interface TemplateRun {
  name: string
  kind: 'page' | 'layout' | 'template' | 'partial'
  /** runs under this parent */
  count: number
  /** milliseconds, the partials it included included */
  ms: number
  children: TemplateRun[]
}

/** A render call in progress (`reply.view()`, `fastify.view()`): where its templates' runs go. */
export interface OpenRender {
  template: string
  layout: string | undefined
  tree: TemplateRun[]
  /** top-level templates run so far: the page, then the layout */
  runs: number
  /** nodes of the tree, bounded */
  nodes: number
  /** the file a compiled template was read from, when the app's @fastify/view tells (its cache's key) */
  fileOf?: (compiled: unknown) => string | undefined
}

/** Nodes kept in one render's tree; beyond, runs of new names are not kept (counted in `more`). */
const MAX_NODES = 200

const renders = new WeakMap<SpanList, OpenRender[]>()

/** A render starts in a profiled request: the templates it runs are recorded under it. */
export function renderStarted (spans: SpanList, render: OpenRender): void {
  let open = renders.get(spans)
  if (open === undefined) renders.set(spans, open = [])
  open.push(render)
}

export function renderEnded (spans: SpanList, render: OpenRender): void {
  const open = renders.get(spans)
  const at = open?.indexOf(render) ?? -1
  if (at !== -1) open!.splice(at, 1)
}

/**
 * The runs in progress, innermost last: a handlebars template runs synchronously (its helpers
 * and partials within its call), so that a partial's parent is the run below it here.
 */
const running: TemplateRun[] = []

function child (siblings: TemplateRun[], render: OpenRender, name: string, kind: TemplateRun['kind']): TemplateRun | undefined {
  for (const run of siblings) if (run.name === name && run.kind === kind) return run
  if (render.nodes >= MAX_NODES) return undefined
  render.nodes++
  const run: TemplateRun = { name, kind, count: 0, ms: 0, children: [] }
  siblings.push(run)
  return run
}

/** The render this top-level run belongs to: the unit's latest render still in progress. */
function currentRender (): OpenRender | undefined {
  const spans = currentSpans()
  if (spans === undefined) return undefined
  return renders.get(spans)?.at(-1)
}

type Compiled = ((this: unknown, context: unknown, options?: { partial?: boolean, name?: string }) => string) & Record<string, unknown>

/** marks a compiled template this module wrapped */
const kObserved = Symbol('fastify-kernel.observedTemplate')
let enabled = false

/**
 * A compiled template (what handlebars' `runtime.template()` returns, for a page, a layout or a
 * partial), wrapped to time its runs in a render of the app's: a run with `options.partial` is a
 * partial named `options.name`, nested under the run in progress; any other is a top-level
 * template of the current render (its page, then its layout). Anywhere else, and once the last
 * profiler closed, it only calls the template.
 */
function observed (template: Compiled): Compiled {
  if (typeof template !== 'function' || kObserved in template) return template
  const wrapper = function (this: unknown, context: unknown, options?: { partial?: boolean, name?: string }): string {
    if (!enabled) return Reflect.apply(template, this, [context, options])
    let run: TemplateRun | undefined
    if (options?.partial === true) {
      const parent = running.at(-1)
      const render = parent === undefined ? undefined : currentRender()
      if (parent !== undefined && render !== undefined && typeof options.name === 'string' && options.name !== '@partial-block') run = child(parent.children, render, options.name, 'partial')
    } else {
      const render = currentRender()
      if (render !== undefined) {
        const rank = render.runs++
        // a global layout (@fastify/view's `layout` option) is named by the file it was compiled from
        const [name, kind] = rank === 0 ? [render.template, 'page' as const] : rank === 1 ? [render.layout ?? render.fileOf?.(compiledRunning) ?? '(the layout)', 'layout' as const] : [`(template ${rank + 1})`, 'template' as const]
        run = child(render.tree, render, name, kind)
      }
    }
    if (run === undefined) return Reflect.apply(template, this, [context, options])
    run.count++
    running.push(run)
    const start = performance.now()
    try {
      return Reflect.apply(template, this, [context, options])
    } finally {
      run.ms += performance.now() - start
      running.pop()
    }
  } as Compiled
  // what handlebars reads of a compiled template (`isTop`, `_setup`, `_child`…)
  for (const key of Object.keys(template)) wrapper[key] = template[key]
  Object.defineProperty(wrapper, kObserved, { value: true })
  return wrapper
}

/** The result of handlebars' `compile()` whose run is in progress, innermost: what the app's view cache holds. */
let compiledRunning: unknown

/**
 * A result of handlebars' `compile()` (compiled on its first run, then calling the template
 * runtime.template() made), wrapped to tell which one is running: @fastify/view caches it under
 * its file's name, which is how a layout it adds by itself is named.
 */
function tracked (compiled: Compiled): Compiled {
  if (typeof compiled !== 'function' || kObserved in compiled) return compiled
  const wrapper = function (this: unknown, context: unknown, options?: { partial?: boolean, name?: string }): string {
    if (!enabled) return Reflect.apply(compiled, this, [context, options])
    const outer = compiledRunning
    compiledRunning = wrapper
    try {
      return Reflect.apply(compiled, this, [context, options])
    } finally {
      compiledRunning = outer
    }
  } as Compiled
  // `_setup`, `_child`: what handlebars calls on a compiled template (closures of its own)
  for (const key of Object.keys(compiled)) wrapper[key] = compiled[key]
  Object.defineProperty(wrapper, kObserved, { value: true })
  return wrapper
}

interface Runtime {
  template: (spec: unknown, env: unknown) => Compiled
}

interface Compiler {
  compile: (input: unknown, options: unknown, env: unknown) => Compiled
}

/** the handlebars runtimes patched, with their own `template` */
const patched = new Map<Runtime, Runtime['template']>()
/** the compiler modules patched, with their own `compile` (every instance's `hb.compile` calls it) */
const compilers = new Map<Compiler, Compiler['compile']>()
const RUNTIME = `${sep}handlebars${sep}dist${sep}cjs${sep}handlebars${sep}runtime.js`
const COMPILER = `${sep}handlebars${sep}dist${sep}cjs${sep}handlebars${sep}compiler${sep}compiler.js`

/**
 * Every copy of handlebars loaded in the process (the app's may not be the kernel's): its
 * runtime module, whose `template` every instance of that copy calls (`hb.template` and the
 * compiler go through `runtime.template(spec, hb)`), so that the app's own instance is
 * observed without a line of the app's. Loaded modules only: handlebars bundled into the app is
 * not seen.
 */
function patchLoadedCopies (): void {
  const cache = createRequire(import.meta.url).cache
  for (const [file, module] of Object.entries(cache)) {
    if (file.endsWith(COMPILER) && module !== undefined) patchCompiler(module.exports as Compiler)
    if (!file.endsWith(RUNTIME) || module === undefined) continue
    const runtime = module.exports as Runtime
    if (patched.has(runtime) || typeof runtime.template !== 'function') continue
    const original = runtime.template
    patched.set(runtime, original)
    runtime.template = function observedRuntimeTemplate (spec, env) {
      return observed(original(spec, env))
    }
  }
}

function patchCompiler (compiler: Compiler): void {
  if (compilers.has(compiler) || typeof compiler.compile !== 'function') return
  const original = compiler.compile
  compilers.set(compiler, original)
  compiler.compile = function observedCompile (input, options, env) {
    return tracked(original(input, options, env))
  }
}

function unpatch (): void {
  enabled = false
  for (const [compiler, original] of compilers) {
    if (compiler.compile.name === 'observedCompile') compiler.compile = original
  }
  compilers.clear()
  for (const [runtime, original] of patched) {
    // unless something wrapped it since: ours then stays in its chain, passing runs through
    if (runtime.template.name === 'observedRuntimeTemplate') runtime.template = original
  }
  patched.clear()
}

const share = new ProcessShare(() => { enabled = true; patchLoadedCopies() }, unpatch)

/**
 * While a profiler is alive, the runs of handlebars templates inside an app's render are
 * recorded (the page, the layout, each partial, nested). Returns the release: the last one puts
 * handlebars' runtime back; templates compiled meanwhile keep a wrapper that only calls them.
 */
export function observeTemplateRuns (): () => void {
  return share.retain()
}

/** Looks for handlebars copies loaded since (an app's plugins load after the kernel): at each context's first profiled request. */
export function findTemplateEngines (): void {
  if (share.held) patchLoadedCopies()
}
