/**
 * The package's declaration merges, loaded for their types alone (nothing at run time). Each
 * built-in panel declares its member of `CollectedData` (`profile.collected.db`, `.http_client`,
 * `.cache`…), and each feature its slot of `KernelState` (`request.kernel.get('security')`),
 * where it is written; a declaration only counts in an app's compilation once its module is
 * loaded, and the package entry imports none of them at run time (an app pays for what it
 * configures). The entry (`index.ts`) and the subpaths that hand out profiles
 * (`fastify-kernel/testing`, `fastify-kernel/opentelemetry`) load this file with
 * `export type {} from`, which the compiled `.d.ts` keeps and the JavaScript drops.
 * test/kernel/declarations.test.ts fails when a module declaring a member is missing here.
 */
export type {} from './kernel/listeners/csp-nonces.js'
export type {} from './kernel/stopwatch.js'
export type {} from './locale/collector.js'
export type {} from './locale/listeners.js'
export type {} from './profiler/collectors/cache.js'
export type {} from './profiler/collectors/config.js'
export type {} from './profiler/collectors/cpu.js'
export type {} from './profiler/collectors/db.js'
export type {} from './profiler/collectors/dump.js'
export type {} from './profiler/collectors/events.js'
export type {} from './profiler/collectors/exception.js'
export type {} from './profiler/collectors/http-client.js'
export type {} from './profiler/collectors/logs.js'
export type {} from './profiler/collectors/mail.js'
export type {} from './profiler/collectors/queue.js'
export type {} from './profiler/collectors/request.js'
export type {} from './profiler/collectors/routing.js'
export type {} from './profiler/collectors/templates.js'
export type {} from './profiler/collectors/time.js'
export type {} from './profiler/cpu/extension.js'
export type {} from './profiler/dump.js'
export type {} from './profiler/io/bullmq.js'
export type {} from './profiler/io/nodemailer.js'
export type {} from './profiler/recording.js'
export type {} from './security/collector.js'
export type {} from './security/request-security.js'
export type {} from './session/collector.js'
export type {} from './session/listeners.js'
