/**
 * The profiler's declaration merges, and the kernel's (its stopwatch, its CSP nonces), loaded for
 * their types alone: each built-in panel declares its member of `CollectedData`
 * (`profile.collected.db`, `.http_client`, `.cache`…) and each recording extension its slot of
 * `KernelState` where it is written, and a declaration only counts in an app's compilation once
 * its module is loaded. The subpaths that hand out profiles (`fastify-kernel/testing`,
 * `fastify-kernel/opentelemetry`) load this file, and the package entry through
 * `src/augmentations.ts`, with `export type {} from`, which the compiled `.d.ts` keeps and the
 * JavaScript drops: nothing of it runs. test/kernel/declarations.test.ts fails when a module
 * declaring a member is missing here.
 */
export type {} from '../kernel/listeners/csp-nonces.js'
export type {} from '../kernel/stopwatch.js'
export type {} from './collectors/cache.js'
export type {} from './collectors/config.js'
export type {} from './collectors/cpu.js'
export type {} from './collectors/db.js'
export type {} from './collectors/dump.js'
export type {} from './collectors/events.js'
export type {} from './collectors/exception.js'
export type {} from './collectors/http-client.js'
export type {} from './collectors/logs.js'
export type {} from './collectors/mail.js'
export type {} from './collectors/queue.js'
export type {} from './collectors/request.js'
export type {} from './collectors/routing.js'
export type {} from './collectors/templates.js'
export type {} from './collectors/time.js'
export type {} from './cpu/extension.js'
export type {} from './dump.js'
export type {} from './io/bullmq.js'
export type {} from './io/nodemailer.js'
export type {} from './recording.js'
