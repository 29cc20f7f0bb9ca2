import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Collector } from '../kernel/collector.js'
import type { Kernel } from '../kernel/kernel.js'
import type { Clock } from '../clock.js'
import type { ChannelSubscription } from './instrument/channels.js'
import type { ModuleInstrumentation } from './instrument/modules.js'
import type { RecordingExtension } from './recorder.js'
import type { SpanFormatter, SpanSettler } from './spans.js'
import type { Profile } from './profile.js'
import type { PageModel } from './pages/pages.js'
import type { KernelProfiler } from './kernel-profiler.js'
import type { ProfileStorage } from './storage/storage.js'
import type { OriginResolver } from './origin.js'
import type { Thresholds } from './thresholds.js'
import type { PanelReader } from './findings.js'

/**
 * One profiler integration: what a panel (or a kind of unit recorded with no code) needs of the
 * profiler, named in one object. The built-in panels are integrations (`src/profiler/panels/`,
 * listed in `panels/index.ts`), and an app adds its own the same way:
 *
 *     await app.register(kernel, { debug: true, profiler: { integrations: [featureFlags] } })
 *
 * Two parts, as Sentry's `setupOnce`/`setup`: what the process does once while at least one
 * profiler using it is alive (`channels`, `modules`: subscribed and patched for the first
 * profiler, undone after the last, never twice for two apps), and what each app's profiler gets
 * (`setup`: its recording extensions, collectors and routes). A built-in one is switched off with
 * `profiler: { panels: { <name>: false } }`: nothing of it is installed.
 */
export interface ProfilerIntegration {
  /** `[a-z][a-z0-9_-]*`, unique among an app's integrations (the built-ins' names included) */
  readonly name: string
  /** the diagnostics channels it listens to (once per process, however many apps) */
  readonly channels?: readonly ChannelSubscription[]
  /**
   * the libraries it instruments where they publish nothing, each with the versions it is written
   * for (`versions`, a semver range): another version, or a copy lacking what it wraps, is said
   * once through the app's logger rather than going silent
   */
  readonly modules?: readonly ModuleInstrumentation[]
  /**
   * the span kinds it records, by kind: what a span keeps once its unit ended (`settle`: plain
   * values, no library object) and what it shows (`format`: masked and cut, when the profile is built)
   */
  readonly spans?: Readonly<Record<string, SpanHandling>>
  /**
   * templates its pages render as content partials, by name (`explain`: `profiler/explain.hbs`),
   * relative to the kernel's `templates/` or absolute
   */
  readonly partials?: Readonly<Record<string, string>>
  /**
   * whether a request asks for something of it, and so to be recorded whatever the capture mode
   * (the CPU profile's armed cookie); honoured only for the clients the profiler admits
   */
  asks?(request: FastifyRequest): boolean
  /** what one app's profiler gets of it, made when that profiler starts */
  setup?(context: IntegrationContext): IntegrationParts | undefined | Promise<IntegrationParts | undefined>
}

/** A span kind's handling (see `ProfilerIntegration.spans`). */
export interface SpanHandling {
  settle?: SpanSettler
  format?: SpanFormatter
}

/** What an integration's `setup` is given: the app's profiler, as it starts. */
export interface IntegrationContext {
  /** the app's profiler: its thresholds, storage, admission, origins, `record()` */
  readonly profiler: IntegrationProfiler
  /** the kernel: its sources (code excerpts), route table, redaction policy */
  readonly kernel: Kernel
  readonly clock: Clock
  /** the stage trace is on (`trace`): every listener's time */
  readonly trace: boolean
  /** the app as the kernel sees it, for a profile reader: versions, features, plugins */
  describeApp (): AppDescription
}

/** What an integration reads of the app's profiler (`app.kernelProfiler`, and more). */
export interface IntegrationProfiler extends KernelProfiler {
  readonly options: { readonly thresholds: Thresholds }
  /** where profiles are kept */
  readonly storage: ProfileStorage
  /** who may open the profiler */
  readonly admission: { admits: (request: FastifyRequest) => boolean }
  /** where spans and dumps were started in the app's code, resolved when profiles are built */
  readonly origins: OriginResolver
  /** resolves once the profile of `token` is stored (or dropped), waiting at most `timeoutMs` */
  untilStored (token: string, timeoutMs?: number): Promise<void>
}

/** The app's configuration, as the profiler describes it. */
export interface AppDescription {
  versions: { node: string, fastify: string, kernel: string }
  debug: boolean
  trace: boolean
  features: ConfiguredFeature[]
  /** the plugin tree Fastify reports (`app.printPlugins()`) */
  plugins: string
}

/** A feature of the kernel, on or off, with what it runs on. */
export interface ConfiguredFeature {
  name: string
  enabled: boolean
  /** its settings that matter when reading a profile: stores, firewalls, locales */
  details: Array<{ name: string, value: string }>
}

/** What an integration adds to one app's profiler (every part optional). */
export interface IntegrationParts {
  /** what begins and ends with every recording (a CPU profile, the stopwatch, waiting for mail still being sent) */
  extensions?: readonly RecordingExtension[]
  /** its panels (and toolbar items), added to the kernel's collectors */
  collectors?: ReadonlyArray<Collector<any>>
  /** its routes, under the profiler's path and for the clients it admits */
  routes?: readonly ProfilerRoute[]
  /** scripts its panels' pages load (the CPU panel's flame graph) */
  scripts?: readonly PanelScript[]
  /**
   * what its panels tell coding agents and scripts, each reading its collector's data: the flags
   * the search and `list_profiles` filter on, the findings `triage_profile` ranks, the figures
   * `compare_profiles` and the compare page put side by side (docs/agents.md)
   */
  readers?: ReadonlyArray<PanelReader<any>>
  /** what the web debug toolbar's model gets from it for a request (the CPU profile's button) */
  toolbar?(request: FastifyRequest): Record<string, unknown>
  /** when the app closes */
  close?(): void | Promise<void>
}

/**
 * A route of an integration, under `/_profiler` (`path: '/:token/mail/:eml'`), answered only to
 * the clients the profiler admits, hidden from the app's documentation, logged at debug level.
 */
export interface ProfilerRoute {
  method: 'GET' | 'POST'
  /** after `/_profiler` */
  path: string
  /** its route name (`_profiler_mail_eml`) */
  name: string
  handler (request: FastifyRequest, reply: FastifyReply, kit: ProfilerRouteKit): Promise<FastifyReply>
}

/**
 * A script of a panel's pages, a file of its own as a strict policy wants (no inline code):
 * served at `/_profiler<path>` (cached 10 minutes, for the clients the profiler admits) and
 * loaded, with the page's CSP nonce, by the pages that show `panel`.
 */
export interface PanelScript {
  /** the collector's name whose pages load it */
  panel: string
  /** after `/_profiler` (`/flame-graph.js`) */
  path: string
  /** its route name (`_profiler_flame_graph_script`) */
  name: string
  /** the file: an absolute path, or one relative to the kernel's `templates/` */
  file: string
}

/** What the profiler's routes share: storage reads and its pages. */
export interface ProfilerRouteKit {
  /** a stored profile (a storage that is down: a 503 naming it) */
  load (token: string): Promise<Profile | undefined>
  /**
   * the same, once its unit's save has settled: asked right after its response (a link followed,
   * curl, a script), a profile may still be on its way to the storage (waited for up to 2 s)
   */
  stored (token: string): Promise<Profile | undefined>
  /** a page of the profiler's layout, under the response's CSP nonces */
  page (reply: FastifyReply, model: PageModel): Promise<FastifyReply>
}

const NAME = /^[a-z][a-z0-9_-]{0,63}$/

/** What is wrong with an app's integration, if anything (one line each). */
export function integrationProblems (value: unknown, index: number): string[] {
  const where = `option "profiler.integrations[${index}]"`
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${where} must be an integration object (ProfilerIntegration), got ${JSON.stringify(value) ?? typeof value}`]
  const integration = value as Record<string, unknown>
  const problems: string[] = []
  if (typeof integration.name !== 'string' || !NAME.test(integration.name)) problems.push(`${where}: its name must match [a-z][a-z0-9_-]*, got ${JSON.stringify(integration.name)}`)
  for (const list of ['channels', 'modules'] as const) {
    if (integration[list] !== undefined && !Array.isArray(integration[list])) problems.push(`${where}: its ${list} must be an array`)
  }
  for (const hook of ['asks', 'setup'] as const) {
    if (integration[hook] !== undefined && typeof integration[hook] !== 'function') problems.push(`${where}: its ${hook} must be a function`)
  }
  for (const map of ['spans', 'partials'] as const) {
    if (integration[map] !== undefined && (typeof integration[map] !== 'object' || integration[map] === null)) problems.push(`${where}: its ${map} must be an object`)
  }
  return problems
}
