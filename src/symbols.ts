/**
 * The kernel's private marks on Fastify objects, in one place (Fastify's own `symbols.js`
 * convention). `Symbol.for`, so that two copies of the package in one app agree on them.
 */

/** Stamped on each route's config: its RouteDefinition (name, controller, definition order). */
export const kKernelRoute = Symbol.for('fastify-kernel.route')
/** Stamped on the config of the kernel's own not-found handler. */
export const kKernelNotFound = Symbol.for('fastify-kernel.not-found')
/** Stamped on the config of the kernel's own routes (the profiler's): matched, never part of the app's route table. */
export const kKernelInternalRoute = Symbol.for('fastify-kernel.internal-route')
/** Stamped on the config of the profiler's routes: not profiled, only for allowed clients. */
export const kProfilerRoute = Symbol.for('fastify-kernel.profiler-route')
/** Stamped on the config of the login check and logout routes: where their CSRF token is read. */
export const kCsrfToken = Symbol.for('fastify-kernel.csrf-token')
