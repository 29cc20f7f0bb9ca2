/**
 * fastify-kernel: the Symfony request kernel for Fastify. A small surface: the plugin, an app
 * factory, the server options it needs, the stages, their priorities and tracing channels, the
 * error table; the rest are types. HTTP exceptions, security helpers, session stores, the
 * OpenTelemetry span processor and the profile storage contract have subpaths of their own
 * (`fastify-kernel/exceptions`, `/security`, `/session`, `/opentelemetry`, `/testing`), loaded
 * only by apps that use them.
 */
import './plugins/fastify-augmentation.js'
import { kernel } from './plugins/kernel.js'

export default kernel
export { kernel }
export { createKernelApp } from './plugins/create-app.js'
export { kernelServerOptions } from './plugins/server-options.js'
export { Stage, Priority } from './src/kernel/stages.js'
// each stage's diagnostics_channel tracing channel, for OpenTelemetry, Sentry, Datadog (docs/profiler.md)
export { StageChannel } from './src/kernel/channels.js'
export { errorCodes } from './src/errors/codes.js'
// Symfony's dump(): shown in the profiler's dump panel; a no-op outside a profiled request
export { dump } from './src/profiler/panels/dump/dump.js'

export type { ErrorCode } from './src/errors/codes.js'
export type { KernelOptions } from './plugins/kernel-options.js'
export type { Clock } from './src/clock.js'
export type { Kernel } from './src/kernel/kernel.js'
export type { FastifyKernel } from './plugins/fastify-kernel.js'
export type { KernelContext, KernelState, RequestAttributes } from './src/kernel/context.js'
export type { RequestUri } from './src/routing/request-uri.js'
export type { KernelResponse } from './src/http/response.js'
export type { StageName } from './src/kernel/stages.js'
export type { StageMessage, StageOutcome } from './src/kernel/channels.js'
export type { StageListener, ListenerOptions, ListenerDescription, Subscription } from './src/kernel/dispatcher.js'
export type { TraceEntry } from './src/kernel/trace.js'
export type {
  KernelEvent,
  RequestEvent,
  ControllerEvent,
  ControllerArgumentsEvent,
  ExceptionEvent,
  ResponseEvent,
  FinishRequestEvent,
  TerminateEvent,
  StageEventMap
} from './src/kernel/events.js'
export type { RouteDefinition } from './src/routing/route-table.js'
// every built-in panel's data (`profile.collected.db`…) and state slot, typed: declarations only, nothing loaded at run time
export type {} from './src/augmentations.js'
// data collectors: a profiler panel and its toolbar item (docs/profiler.md)
export type { Collector, CollectedData, FinishedRequest, FinishedUnit, RecordedUnit, Badge, PanelFigures, ProfileFigures } from './src/kernel/collector.js'
export type { ProfilerOptions } from './src/profiler/options.js'
export type { Profile, ProfileSummary } from './src/profiler/profile.js'
// an app's own profiler integration (`profiler.integrations`: its capture, panel and routes; docs/getting-started.md)
export type { ProfilerIntegration, IntegrationContext, IntegrationParts, IntegrationProfiler, ProfilerRoute, ProfilerRouteKit, PanelScript, SpanHandling } from './src/profiler/integration.js'
// what an integration's panels tell coding agents and scripts (`IntegrationParts.readers`: flags, triage's findings, a comparison's figures; docs/agents.md)
export type { PanelReader, Finding, FindingOrigin, FindingSeverity, ComparedFigures } from './src/profiler/findings.js'
export type { ChannelSubscription } from './src/profiler/instrument/channels.js'
export type { ModuleInstrumentation } from './src/profiler/instrument/modules.js'
export type { InstrumentedCopy } from './src/profiler/instrument/notices.js'
export type { RecordingExtension, LiveUnit } from './src/profiler/recorder.js'
export type { Recording } from './src/profiler/recording.js'
export type { PageModel } from './src/profiler/pages/pages.js'
// an app's own profile storage (`profiler.storage`; docs/profiler.md "Storage"), held to the contract of `fastify-kernel/testing`
export type { ProfileStorage, ProfileFilter, FigureFilter } from './src/profiler/storage/storage.js'
export type { LogRecord } from './src/profiler/panels/logs/collector.js'
export type { ProfiledResponse } from './src/profiler/profiler.js'
export type { Stopwatch, StopwatchEvent, StopwatchPeriod } from './src/kernel/stopwatch.js'
export type { Span } from './src/profiler/spans.js'
export type { TimeData } from './src/profiler/panels/time/collector.js'
export type { Timeline, TimelineRow } from './src/profiler/panels/time/timeline.js'
export type { TemplatesData, TemplateRender } from './src/profiler/panels/templates/collector.js'
export type { DumpData, DumpEntry } from './src/profiler/panels/dump/collector.js'
export type { ConfigData, ConfiguredFeature } from './src/profiler/panels/config/collector.js'
// request-stage services' options (docs/security.md); their helpers are in the subpaths
export type { SessionOptions } from './src/session/options.js'
export type { LocaleOptions } from './src/locale/options.js'
export type { SecurityOptions, FirewallOptions } from './src/security/options.js'
export type { LocaleCollected } from './src/locale/collector.js'
// brings @fastify/session's typings (request.session) to apps; request.flash by fastify-kernel/session
export type { FastifySessionObject, SessionStore as FastifySessionStore } from '@fastify/session'
// what the kernel needs of the app's Redis client (ioredis has it): the plugin imports no client
export type { RedisCommands } from './src/redis/commands.js'
