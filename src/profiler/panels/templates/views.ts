import type { FastifyReply, FastifyRequest } from 'fastify'
import { currentSpans } from '../../spans.js'
import type { OpenSpan } from '../../spans.js'
import { OriginCapture } from '../../origin.js'
import { findTemplateEngines, renderEnded, renderStarted } from './template-runs.js'
import type { OpenRender } from './template-runs.js'

type Render = (this: unknown, ...args: unknown[]) => unknown

/** marks a function this module made, so that nothing is wrapped twice */
const kObserved = Symbol('fastify-kernel.observedRender')

/** Frames kept below a render call: the route's handler calls `reply.view()` itself. */
const RENDER_FRAMES = 8

/**
 * The template a render call names (`reply.view('page.hbs', data, { layout })`), and the tree
 * of what it runs (page, layout, partials: template-runs.ts); `caller`: where to take the stack,
 * below the observed function the app called.
 */
function renderSpan (args: readonly unknown[], caller: OriginCapture, self: unknown): OpenSpan | undefined {
  const spans = currentSpans()
  if (spans === undefined) return undefined
  const [page, , options] = args
  const given = typeof options === 'object' && options !== null ? (options as { layout?: unknown }).layout : undefined
  const layout = typeof given === 'string' ? given : undefined
  const template = typeof page === 'string' ? page : '(a compiled template)'
  const render: OpenRender = { template, layout, tree: [], runs: 0, nodes: 0 }
  const cache = viewCacheOf(self)
  if (cache !== undefined) render.fileOf = (compiled) => cachedName(cache, compiled)
  const data: Record<string, unknown> = { tree: render.tree }
  if (layout !== undefined) data.layout = layout
  const span = spans.start('template', template, data, undefined, caller)
  renderStarted(spans, render)
  return {
    end (more) {
      renderEnded(spans, render)
      span.end(more)
    },
    fail (error, more) {
      renderEnded(spans, render)
      span.fail(error, more)
    }
  }
}

/** @fastify/view's cache of compiled templates (toad-cache's LruMap, under `Symbol('@fastify/view/cache')`), keyed `<decorator>|<file>`. */
interface ViewCache {
  items: Map<string, { value?: unknown }>
}

/** The view cache of the instance a render was called on (`reply.view`: its server's), if it has the known shape. */
function viewCacheOf (self: unknown): ViewCache | undefined {
  const server = (self as { server?: unknown } | null)?.server ?? self
  if (typeof server !== 'object' || server === null) return undefined
  for (const owner of chain(server)) {
    for (const symbol of Object.getOwnPropertySymbols(owner)) {
      if (symbol.description !== '@fastify/view/cache') continue
      const items = (Object.getOwnPropertyDescriptor(owner, symbol)?.value as { items?: unknown } | undefined)?.items
      return items instanceof Map ? { items } : undefined
    }
  }
  return undefined
}

/** The file a compiled template was cached under (`shop-layout.hbs`), if it is there. */
function cachedName (cache: ViewCache, compiled: unknown): string | undefined {
  if (compiled === undefined) return undefined
  for (const [key, item] of cache.items) {
    if (item?.value === compiled) return key.slice(key.indexOf('|') + 1)
  }
  return undefined
}

/** `fastify.view(page, data, opts?, done?)` and `reply.viewAsync(page, data, opts?)`: a promise, or a callback. */
function observedRender (render: Render): Render {
  const observed = function (this: unknown, ...args: unknown[]): unknown {
    const span = renderSpan(args, site, this)
    if (span === undefined) return Reflect.apply(render, this, args)
    const last = args.length - 1
    const done = args[last]
    if (typeof done === 'function') {
      args[last] = (error: unknown, html: unknown) => {
        if (error === null || error === undefined) span.end()
        else span.fail(error)
        return Reflect.apply(done, undefined, [error, html])
      }
      return Reflect.apply(render, this, args)
    }
    let result: unknown
    try {
      result = Reflect.apply(render, this, args)
    } catch (error) {
      span.fail(error)
      throw error
    }
    return Promise.resolve(result).then((html) => { span.end(); return html }, (error: unknown) => { span.fail(error); throw error })
  }
  const site = new OriginCapture(observed, RENDER_FRAMES)
  return mark(observed)
}

/**
 * `reply.view(page, data, opts?)`: @fastify/view renders (its `<name>Async`) then sends the HTML,
 * or the error. Timing the call whole would count the response's own hooks (the toolbar's
 * injection among them) as rendering, so in a profiled request it is done here the same way,
 * through the observed `<name>Async`; elsewhere the original runs.
 */
function observedSend (send: Render, asyncName: string): Render {
  return mark(async function (this: unknown, ...args: unknown[]): Promise<unknown> {
    const reply = this as FastifyReply
    const render = (reply as unknown as Record<string, unknown>)[asyncName]
    if (currentSpans() === undefined || typeof render !== 'function' || !(kObserved in render)) return Reflect.apply(send, this, args)
    try {
      reply.send(await Reflect.apply(render, reply, args.slice(0, 3)))
    } catch (error) {
      reply.send(error)
    }
    return reply
  })
}

function mark (fn: Render): Render {
  Object.defineProperty(fn, kObserved, { value: true })
  return fn
}

/** `owner[name]` is a function, found as an own data property (a Fastify decorator), not yet observed. */
function ownFunction (owner: object, name: string): Render | undefined {
  const value = Object.getOwnPropertyDescriptor(owner, name)?.value as unknown
  return typeof value === 'function' && !(kObserved in value) ? value as Render : undefined
}

function * chain (start: object): Generator<object> {
  for (let object: object | null = start; object !== null && object !== Object.prototype; object = Object.getPrototypeOf(object) as object | null) yield object
}

/**
 * Observes the renders of an app's own @fastify/view, registered before or after the kernel, at
 * the root or in an encapsulated plugin. @fastify/view publishes no diagnostics channel; what
 * it leaves are its decorators: on the instance, `fastify.<name>` (`view` by default, the one
 * carrying `clearCache()`), and on the reply, `reply.<name>` and `reply.<name>Async`. Each
 * Fastify context has its own instance and Reply prototype, both inheriting from its parent's;
 * the first profiled request served by a context finds the decorators on those chains (every
 * plugin is loaded by then, whatever the registration order) and wraps each where it is
 * defined, once. A wrapped decorator records a `template` span when it runs for a profiled
 * request and calls the original otherwise.
 *
 * The kernel's own pages (error pages, the profiler) render through a view of their own,
 * registered in a context no app route belongs to: they are never wrapped, never recorded.
 * Limits: a render function taken before the first profiled request (`const render = app.view`)
 * is not observed, nor a `reply.<name>Async` renamed by @fastify/view's `asyncPropertyName`.
 */
export class ViewObserver {
  private readonly seen = new WeakSet<object>()
  /** the decorator names @fastify/view used, by instance */
  private readonly names = new Set<string>()

  readonly observe = (request: FastifyRequest, reply: FastifyReply): void => {
    const server = request.server as object
    if (!this.seen.has(server)) {
      this.seen.add(server)
      // the app's handlebars may have been loaded after the kernel
      findTemplateEngines()
      for (const owner of chain(server)) {
        for (const name of Object.keys(owner)) {
          const render = ownFunction(owner, name)
          if (render === undefined || typeof (render as { clearCache?: unknown }).clearCache !== 'function') continue
          this.names.add(name)
          const observed = observedRender(render)
          Object.defineProperty(observed, 'clearCache', { value: (render as unknown as { clearCache: unknown }).clearCache })
          ;(owner as Record<string, unknown>)[name] = observed
        }
      }
    }
    const prototype = Object.getPrototypeOf(reply) as object
    if (this.seen.has(prototype)) return
    this.seen.add(prototype)
    for (const owner of chain(prototype)) {
      for (const name of this.names) {
        const asyncName = `${name}Async`
        const render = ownFunction(owner, asyncName)
        if (render !== undefined) (owner as Record<string, unknown>)[asyncName] = observedRender(render)
        const send = ownFunction(owner, name)
        if (send !== undefined) (owner as Record<string, unknown>)[name] = observedSend(send, asyncName)
      }
    }
  }
}
