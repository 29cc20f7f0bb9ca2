/**
 * Every declaration merge of the package, loaded for its types alone (nothing at run time): the
 * profiler's and the kernel's (`profiler/augmentations.ts`), and the features' (`session`,
 * `security`, `locale`: their panels and `request.kernel.get()` slots). A declaration only counts
 * in an app's compilation once its module is loaded, and the package entry imports none of them
 * at run time (an app pays for what it configures): `index.ts` loads this file with
 * `export type {} from`, which the compiled `.d.ts` keeps and the JavaScript drops.
 * test/kernel/declarations.test.ts fails when a module declaring a member is missing.
 */
export type {} from './profiler/augmentations.js'
export type {} from './profiler/panels/augmentations.js'
export type {} from './locale/collector.js'
export type {} from './locale/listeners.js'
export type {} from './security/collector.js'
export type {} from './security/request-security.js'
export type {} from './session/collector.js'
export type {} from './session/listeners.js'
