/**
 * The built-in panels' declaration merges, loaded for their types alone: each panel declares its
 * member of `CollectedData` (`profile.collected.db`, `.http_client`, `.cache`…) and each recording
 * extension its slot of `KernelState` where it is written, and a declaration only counts in an
 * app's compilation once its module is loaded. The package entry loads this list through
 * `src/augmentations.ts` with `export type {} from`, which the compiled `.d.ts` keeps and the
 * JavaScript drops: nothing of it runs. test/kernel/declarations.test.ts fails when a module
 * declaring a member is missing here.
 */
export type {} from './cache/collector.js'
export type {} from './config/collector.js'
export type {} from './cpu/collector.js'
export type {} from './cpu/extension.js'
export type {} from './db/collector.js'
export type {} from './dump/collector.js'
export type {} from './dump/dump.js'
export type {} from './events/collector.js'
export type {} from './exception/collector.js'
export type {} from './http-client/collector.js'
export type {} from './logs/collector.js'
export type {} from './mail/collector.js'
export type {} from './mail/nodemailer.js'
export type {} from './queue/bullmq.js'
export type {} from './queue/collector.js'
export type {} from './request/collector.js'
export type {} from './routing/collector.js'
export type {} from './templates/collector.js'
export type {} from './time/collector.js'
