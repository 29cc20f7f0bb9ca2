/**
 * `fastify-kernel/opentelemetry`: the kernel's span processor, for an app's OpenTelemetry SDK, with
 * the types of every profile: the profiler's and the built-in panels' declaration merges, loaded
 * for their types alone.
 */
export * from './profiler/opentelemetry.js'
export type {} from './profiler/augmentations.js'
export type {} from './profiler/panels/augmentations.js'
