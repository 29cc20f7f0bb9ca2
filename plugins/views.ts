import type { FastifyInstance } from 'fastify'
import view from '@fastify/view'
import Handlebars from 'handlebars'
import { templatesDir } from '../src/config/paths.js'
import { registerTemplateHelpers } from '../src/http/template-helpers.js'

/** The instance decorator the kernel renders with; named so it never clashes with an app's own `view`. */
export const VIEW_PROPERTY = 'kernelView'

type Render = (page: string, data?: object) => Promise<string>

/**
 * @fastify/view on a handlebars instance of the kernel's own (an app's helpers and partials
 * never leak into error pages). Templates are the package's own files: compiled once and cached.
 * The view plugin lives in an encapsulated child: its per-request `reply.locals` hook then
 * stays off the app's routes, and only its renderer is decorated on the app.
 */
export async function registerKernelViews (app: FastifyInstance, partials: Record<string, string> = {}): Promise<void> {
  const handlebars = Handlebars.create()
  registerTemplateHelpers(handlebars)
  let render: Render | undefined
  await app.register(async function kernelViews (child) {
    await child.register(view, {
      engine: { handlebars },
      root: templatesDir,
      propertyName: VIEW_PROPERTY,
      production: true,
      options: { partials }
    })
    render = child[VIEW_PROPERTY]
  })
  app.decorate(VIEW_PROPERTY, render as Render)
}

declare module 'fastify' {
  interface FastifyInstance {
    /** renders one of the kernel's templates to a string (works for requests that have no route context) */
    kernelView: Render
  }
}
