/**
 * The profiler core's declaration merges, and the kernel's (its stopwatch, its CSP nonces), loaded
 * for their types alone (the built-in panels' own are listed in `panels/augmentations.ts`): a
 * declaration only counts in an app's compilation once its module is loaded. The subpaths that
 * hand out profiles (`fastify-kernel/testing`, `fastify-kernel/opentelemetry`) load this file, and
 * the package entry loads it and the panels' list through `src/augmentations.ts`, with
 * `export type {} from`, which the compiled `.d.ts` keeps and the JavaScript drops: nothing of it
 * runs. test/kernel/declarations.test.ts fails when a module declaring a member is missing.
 */
export type {} from '../kernel/listeners/csp-nonces.js'
export type {} from '../kernel/stopwatch.js'
export type {} from './recording.js'
export type {} from './guards/guards.js'
