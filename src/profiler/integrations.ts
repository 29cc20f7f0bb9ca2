import type { FastifyRequest } from 'fastify'
import { ProcessChannels } from './instrument/channels.js'
import type { ChannelSubscription } from './instrument/channels.js'
import { instrumentModules } from './instrument/modules.js'
import { instrumentEsmCopies } from './instrument/esm-copies.js'
import { instrumentationNotices } from './instrument/notices.js'
import type { NoticeLogger } from './instrument/notices.js'
import { formatSpansWith, settleSpansWith } from './spans.js'
import type { IntegrationContext, PanelScript, ProfilerIntegration, ProfilerRoute } from './integration.js'
import type { Profiler } from './profiler.js'

/** An integration's process-wide part, one per integration object (so two apps share it). */
const captures = new WeakMap<ProfilerIntegration, ProcessChannels>()

/** Its channels and its modules (their CommonJS copies, and the ES module copies of dual packages), as one process share. */
export function captureOf (integration: ProfilerIntegration): ProcessChannels | undefined {
  const { channels = [], modules = [] } = integration
  if (channels.length === 0 && modules.length === 0) return undefined
  let capture = captures.get(integration)
  if (capture === undefined) {
    capture = new ProcessChannels(() => {
      const subscriptions: ChannelSubscription[] = [...channels]
      if (modules.length > 0) subscriptions.push({ instrument: () => instrumentModules(modules) })
      const dual = modules.filter((module) => module.esm === true)
      if (dual.length > 0) subscriptions.push({ instrument: () => instrumentEsmCopies(dual) })
      return subscriptions
    })
    captures.set(integration, capture)
  }
  return capture
}

/** Sets how the spans of the integration's kinds settle and are formatted (the same functions whichever app sets them). */
export function handleSpansOf (integration: ProfilerIntegration): void {
  for (const [kind, handling] of Object.entries(integration.spans ?? {})) {
    if (handling.settle !== undefined) settleSpansWith(kind, handling.settle)
    if (handling.format !== undefined) formatSpansWith(kind, handling.format)
  }
}

/** What the composition wires of the integrations set up for one app. */
export interface IntegrationsSetUp {
  /** every integration's routes, to be registered under the profiler's path */
  readonly routes: readonly ProfilerRoute[]
  /** every integration's panel scripts, served and loaded by the profiler's pages */
  readonly scripts: readonly PanelScript[]
  /** content partials of their pages, by name */
  readonly partials: Readonly<Record<string, string>>
  /** what the toolbar's model gets of them for a request */
  toolbar (request: FastifyRequest): Record<string, unknown>
  /** undoes it all (the app closes): their close, then the process-wide parts let go */
  close (): Promise<void>
}

/**
 * Sets up `integrations` for one app's profiler, in their order: their span kinds' handling,
 * their process-wide capture (retained; the ES module copies of dual packages instrumented
 * before this resolves, so that the app's later `import` gets them instrumented), then each
 * one's `setup`: its recording extensions, collectors and readers (for agents and scripts)
 * added, its routes and toolbar parts handed back. What the instrumentation finds wrong (a
 * version outside a declared range, a method missing) is said once through `log`.
 */
export async function setUpIntegrations (integrations: readonly ProfilerIntegration[], profiler: Profiler, context: Omit<IntegrationContext, 'profiler'>, log: NoticeLogger): Promise<IntegrationsSetUp> {
  const given: IntegrationContext = { ...context, profiler }
  const releases: Array<() => void> = [instrumentationNotices.listen(log)]
  const closes: Array<() => void | Promise<void>> = []
  const routes: ProfilerRoute[] = []
  const scripts: PanelScript[] = []
  const partials: Record<string, string> = {}
  const toolbars: Array<(request: FastifyRequest) => Record<string, unknown>> = []
  const close = async (): Promise<void> => {
    for (const done of closes.splice(0).reverse()) await done()
    for (const release of releases.splice(0).reverse()) release()
  }
  try {
    for (const integration of integrations) {
      handleSpansOf(integration)
      Object.assign(partials, integration.partials)
      if (integration.asks !== undefined) profiler.capture.asks.push(integration.asks.bind(integration))
      const capture = captureOf(integration)
      if (capture !== undefined) {
        releases.push(capture.retain())
        await capture.ready()
      }
      const parts = await integration.setup?.(given)
      if (parts === undefined) continue
      for (const extension of parts.extensions ?? []) profiler.extend(extension)
      for (const collector of parts.collectors ?? []) context.kernel.addCollector(collector)
      routes.push(...parts.routes ?? [])
      scripts.push(...parts.scripts ?? [])
      profiler.readers.push(...parts.readers ?? [])
      if (parts.toolbar !== undefined) toolbars.push(parts.toolbar.bind(parts))
      if (parts.close !== undefined) closes.push(parts.close.bind(parts))
    }
  } catch (error) {
    await close()
    throw error
  }
  return {
    routes,
    scripts,
    partials,
    toolbar: (request) => Object.assign({}, ...toolbars.map((toolbar) => toolbar(request))) as Record<string, unknown>,
    close
  }
}
