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
export type { ProfilerOptions } from './profiler/options.js'
export type { Profile, ProfileSummary, LogRecord } from './profiler/profile.js'
export type { ProfileStorage, ProfileFilter } from './profiler/storage/storage.js'
export { MemoryProfileStorage } from './profiler/storage/memory.js'
export { FileProfileStorage } from './profiler/storage/file.js'
export { PROFILER_PATH } from './profiler/profiler.js'
