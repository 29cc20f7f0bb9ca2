/**
 * `fastify-kernel/testing`: the storage contract as tests (`profileStorageContract`), for an app's
 * own storage, with the types of every profile it hands out: the profiler's and the built-in
 * panels' declaration merges (`profile.collected.db`…), loaded for their types alone.
 */
export * from './profiler/storage/contract.js'
export type {} from './profiler/augmentations.js'
export type {} from './profiler/panels/augmentations.js'
