import { kernel } from '../plugins/kernel.js'

export default kernel
export { kernel }
export { createKernelApp } from '../plugins/create-app.js'
export { kernelServerOptions, kernelFrameworkErrors, kernelRewriteUrl, KERNEL_MAX_PARAM_LENGTH, KERNEL_MAX_HEADER_SIZE } from '../plugins/server-options.js'
export type { KernelOptions } from './config/options.js'
export { Kernel } from './kernel/kernel.js'
export { KernelContext } from './kernel/context.js'
export type { RequestAttributes, RequestUri } from './kernel/context.js'
export { Stage, Priority } from './kernel/stages.js'
export type { StageName } from './kernel/stages.js'
export type { StageListener, ListenerOptions } from './kernel/dispatcher.js'
export type { TraceEntry } from './kernel/trace.js'
export {
  KernelEvent,
  RequestEvent,
  ControllerEvent,
  ControllerArgumentsEvent,
  ExceptionEvent,
  ResponseEvent,
  FinishRequestEvent,
  TerminateEvent
} from './kernel/events.js'
export type { KernelResponse, StageEventMap } from './kernel/events.js'
export * from './errors/http-exceptions.js'
export { KernelError } from './errors/kernel-errors.js'
export type { KernelErrorCode } from './errors/kernel-errors.js'
export type { RouteDefinition } from './routing/route-table.js'
// request-stage services: session, locale, security (docs/security.md)
export * from './security/index.js'
export { MemorySessionStore } from './session/memory-store.js'
export type { SessionStore, MemorySessionStoreOptions } from './session/memory-store.js'
export type { SessionOptions } from './session/options.js'
export type { SessionCollected } from './session/session-listeners.js'
export type { LocaleOptions } from './locale/options.js'
export type { LocaleCollected } from './locale/locale-listeners.js'
// brings @fastify/session's and @fastify/flash's typings (request.session, request.flash) to apps
export type { FastifySessionObject, SessionStore as FastifySessionStore } from '@fastify/session'
export type FastifyFlashPlugin = typeof import('@fastify/flash')
// the web profiler (docs/profiler.md)
export type { ProfilerOptions } from './profiler/options.js'
export type { Profile, ProfileSummary, LogRecord } from './profiler/profile.js'
export type { ProfileStorage, ProfileFilter } from './profiler/storage/storage.js'
export { MemoryProfileStorage } from './profiler/storage/memory.js'
export { FileProfileStorage } from './profiler/storage/file.js'
export { FolderInUseError } from './profiler/storage/folder-lock.js'
export { RedisProfileStorage } from './profiler/storage/redis.js'
export type { RedisProfileStorageOptions } from './profiler/storage/redis.js'
// what the kernel needs of the app's Redis client (ioredis has it): the plugin imports no client
export type { RedisCommands } from './redis/commands.js'
export { GuardedSessionStore } from './session/guarded-store.js'
export { PROFILER_PATH } from './profiler/profiler.js'
