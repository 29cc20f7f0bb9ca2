/**
 * The kernel's private marks on Fastify objects, in one place (Fastify's own `symbols.js`
 * convention). `Symbol.for`, so that two copies of the package in one app agree on them.
 */
import type { RouteDefinition } from './routing/route-table.js'

/** Stamped on each route's config: its RouteDefinition (name, controller, definition order). */
export const kKernelRoute: unique symbol = Symbol.for('fastify-kernel.route')
/** A request's KernelContext as recorded (null until made): `request.kernel` reads it, or makes it. */
export const kKernelContext: unique symbol = Symbol.for('fastify-kernel.context')
/** Stamped on the config of the kernel's own not-found handler. */
export const kKernelNotFound: unique symbol = Symbol.for('fastify-kernel.not-found')
/** Stamped on the config of the kernel's own routes (the profiler's): matched, never part of the app's route table. */
export const kKernelInternalRoute: unique symbol = Symbol.for('fastify-kernel.internal-route')
/** Stamped on the config of the profiler's routes: not profiled, only for allowed clients. */
export const kProfilerRoute: unique symbol = Symbol.for('fastify-kernel.profiler-route')
/** Stamped on the config of the login check and logout routes: where their CSRF token is read. */
export const kCsrfToken: unique symbol = Symbol.for('fastify-kernel.csrf-token')

/** The kernel's marks a route's config may carry, typed. */
export interface RouteMarks {
  [kKernelRoute]?: RouteDefinition
  [kKernelNotFound]?: boolean
  [kKernelInternalRoute]?: boolean
  /**
   * `true` for the profiler's pages (not profiled), `'profiled'` for the few Symfony profiles (its
   * redirects, `/_wdt/empty`), `'refuses'` for a route that answers a client the profiler does not
   * admit itself, with a 403 that says why (the MCP endpoint: a client configured by hand)
   */
  [kProfilerRoute]?: true | 'profiled' | 'refuses'
  [kCsrfToken]?: { parameter: string, query: boolean }
}

/**
 * A route config's kernel marks. Fastify types a route's config as the app declares it
 * (`FastifyContextConfig`); the kernel's own symbol-keyed marks are read through this one view.
 */
export function routeMarks (config: unknown): RouteMarks {
  return (typeof config === 'object' && config !== null ? config : {}) as RouteMarks
}
