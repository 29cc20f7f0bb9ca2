import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import view from '@fastify/view'
import Handlebars from 'handlebars'
import { templatesDir } from '../src/config/paths.js'
import { TEMPLATE_HELPERS, registerTemplateHelpers } from '../src/http/template-helpers.js'
import { TemplateCompiler } from '../src/errors/compiled-template.js'
import type { CompiledTemplate } from '../src/errors/compiled-template.js'

/** The stack trace of debug pages, shared by the error page and the profiler's exception panel. */
export const TRACE_PARTIALS: Record<string, string> = {
  trace: 'errors/trace.hbs',
  'frame-location': 'errors/frame-location.hbs',
  'trace-style': 'errors/trace-style.hbs'
}

/** The kernel's helpers, known to the compiler, which then calls them directly. */
export const KNOWN_HELPERS = Object.fromEntries(TEMPLATE_HELPERS.map((name) => [name, true]))

/** Renders one of the kernel's templates (relative to `templates/`) to a string. */
export type TemplateRender = (page: string, data?: object) => Promise<string>

/** The kernel's own templates: a renderer, and the handlebars instance it compiles with (collectors' templates). */
export interface KernelTemplates {
  render: TemplateRender
  handlebars: typeof Handlebars
}

/**
 * A renderer of the package's own templates: @fastify/view on a handlebars instance of its own
 * (an app's helpers and partials never leak into kernel pages), compiled once and cached.
 * The view plugin is registered in an encapsulated child, so its per-request `reply.locals`
 * hook stays off the app's routes and its decorators never clash with an app's own view.
 */
export async function createTemplateRenderer (app: FastifyInstance, partials: Record<string, string> = {}): Promise<KernelTemplates> {
  const handlebars = Handlebars.create()
  registerTemplateHelpers(handlebars)
  let render: TemplateRender | undefined
  await app.register(async function kernelTemplates (child) {
    await child.register(view, {
      engine: { handlebars },
      root: templatesDir,
      propertyName: 'kernelTemplates',
      production: true,
      options: {
        partials,
        // the kernel's templates never rely on indented partial output: handlebars would
        // re-indent every line of each partial on every render (most of a debug page's cost);
        // its own helpers are known to the compiler, which then calls them directly
        compileOptions: { preventIndent: true, knownHelpers: KNOWN_HELPERS }
      }
    })
    render = (child as unknown as { kernelTemplates: TemplateRender }).kernelTemplates
  })
  return { render: render as TemplateRender, handlebars }
}

/** Renders one of the kernel's templates synchronously, from its compiled closure. */
export type PageRender = (page: string, data: object) => string

/**
 * The error pages' renderer: each template (and the trace partials) read and compiled once, on
 * its first use, to plain closures (`src/errors/compiled-template.ts`) that render the same bytes
 * as the handlebars instance would, in a fraction of its time and without a promise.
 */
export function createPageRenderer (handlebars: typeof Handlebars, partialFiles: Record<string, string> = {}): PageRender {
  const compiler = new TemplateCompiler(handlebars)
  const partials = new Map<string, CompiledTemplate>()
  const pages = new Map<string, CompiledTemplate>()
  const compile = (file: string): CompiledTemplate => compiler.compile(readFileSync(join(templatesDir, file), 'utf8'), { partials })
  return (page, data) => {
    let template = pages.get(page)
    if (template === undefined) {
      for (const [name, file] of Object.entries(partialFiles)) if (!partials.has(name)) partials.set(name, compile(file))
      template = compile(page)
      pages.set(page, template)
    }
    return template(data)
  }
}
