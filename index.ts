import './plugins/fastify-augmentation.js'
import { kernel } from './plugins/kernel.js'

export default kernel
export { kernel }
export { createKernelApp } from './plugins/create-app.js'
export { kernelServerOptions, kernelFrameworkErrors, kernelRewriteUrl, KERNEL_MAX_PARAM_LENGTH, KERNEL_MAX_HEADER_SIZE, KERNEL_REQUEST_TIMEOUT, KERNEL_CONNECTION_TIMEOUT } from './plugins/server-options.js'
export type { KernelOptions } from './src/config/options.js'
export { invalidHostPatterns } from './src/routing/trusted-hosts.js'
export type { Kernel } from './src/kernel/kernel.js'
export type { FastifyKernel } from './plugins/fastify-kernel.js'
export { KernelContext } from './src/kernel/context.js'
export type { RequestAttributes } from './src/kernel/context.js'
export type { RequestUri } from './src/routing/request-uri.js'
export type { KernelResponse } from './src/http/response.js'
export { Stage, Priority } from './src/kernel/stages.js'
export type { StageName } from './src/kernel/stages.js'
export type { StageListener, ListenerOptions } from './src/kernel/dispatcher.js'
export type { TraceEntry } from './src/kernel/trace.js'
export {
  KernelEvent,
  RequestEvent,
  ControllerEvent,
  ControllerArgumentsEvent,
  ExceptionEvent,
  ResponseEvent,
  FinishRequestEvent,
  TerminateEvent
} from './src/kernel/events.js'
export type { StageEventMap } from './src/kernel/events.js'
export * from './src/errors/exceptions.js'
export { errorCodes } from './src/errors/codes.js'
export type { ErrorCode } from './src/errors/codes.js'
export type { RouteDefinition } from './src/routing/route-table.js'
// request-stage services: session, locale, security (docs/security.md)
export * from './src/security/index.js'
export { MemorySessionStore } from './src/session/memory-store.js'
export { MIN_SECRET_LENGTH } from './src/session/options.js'
export type { SessionStore, MemorySessionStoreOptions } from './src/session/memory-store.js'
export type { SessionOptions } from './src/session/options.js'
export type { SessionCollected } from './src/session/collector.js'
export type { LocaleOptions } from './src/locale/options.js'
export type { LocaleCollected } from './src/locale/collector.js'
// brings @fastify/session's typings (request.session) to apps; request.flash is typed by the kernel
export type { FastifySessionObject, SessionStore as FastifySessionStore } from '@fastify/session'
// the web profiler (docs/profiler.md)
export type { ProfilerOptions } from './src/profiler/options.js'
export type { Profile, ProfileSummary } from './src/profiler/profile.js'
export type { LogRecord } from './src/profiler/collectors/logs.js'
export type { Collector, CollectedData, FinishedRequest, Badge } from './src/kernel/collector.js'
export type { KernelState } from './src/kernel/context.js'
export type { ProfileStorage, ProfileFilter } from './src/profiler/storage/storage.js'
export { MemoryProfileStorage } from './src/profiler/storage/memory.js'
export { FileProfileStorage } from './src/profiler/storage/file.js'
export { RedisProfileStorage } from './src/profiler/storage/redis.js'
export type { RedisProfileStorageOptions } from './src/profiler/storage/redis.js'
// what the kernel needs of the app's Redis client (ioredis has it): the plugin imports no client
export type { RedisCommands } from './src/redis/commands.js'
export { GuardedSessionStore } from './src/session/guarded-store.js'
export { PROFILER_PATH } from './src/profiler/recording.js'
