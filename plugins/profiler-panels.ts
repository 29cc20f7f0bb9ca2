import type { FastifyInstance } from 'fastify'
import type { Kernel } from '../src/kernel/kernel.js'
import type { ResolvedKernelOptions } from './kernel-options.js'
import type { Profiler } from '../src/profiler/profiler.js'
import { packageVersion } from '../src/config/paths.js'
import { RecordingStopwatch } from '../src/profiler/panels/time/stopwatch.js'
import { ViewObserver } from '../src/profiler/panels/templates/views.js'
import { observeMeasures } from '../src/profiler/panels/time/measures.js'
import { listenToDumps, settleDumps } from '../src/profiler/panels/dump/dump.js'
import { observeTemplateRuns } from '../src/profiler/panels/templates/template-runs.js'
import { timeCollector } from '../src/profiler/panels/time/collector.js'
import { templatesCollector } from '../src/profiler/panels/templates/collector.js'
import { dumpCollector } from '../src/profiler/panels/dump/collector.js'
import { configCollector } from '../src/profiler/panels/config/collector.js'
import type { ConfiguredFeature } from '../src/profiler/panels/config/collector.js'

/** Each feature, on or off, with the stores it runs on: what a profile reader needs to know. */
function features (options: ResolvedKernelOptions, profiler: Profiler): ConfiguredFeature[] {
  const { session, security, locale } = options
  const store = (value: object | undefined, fallback: string): string => value === undefined ? fallback : value.constructor?.name ?? 'custom'
  const throttling = security?.options.loginThrottlingStore
  return [
    {
      name: 'profiler',
      enabled: true,
      details: [
        { name: 'storage', value: profiler.storage.kind + (profiler.options.storage === 'file' ? ` (${profiler.options.directory})` : typeof profiler.options.storage === 'object' ? ' (the app\'s own)' : '') },
        { name: 'toolbar', value: profiler.options.toolbar ? 'on' : 'off' },
        { name: 'maxProfiles', value: String(profiler.options.maxProfiles) },
        { name: 'maxSpans', value: String(profiler.options.maxSpans) }
      ]
    },
    { name: 'session', enabled: session !== undefined, details: session === undefined ? [] : [{ name: 'store', value: store(session.store, 'memory (this process)') }] },
    {
      name: 'security',
      enabled: security !== undefined,
      details: security === undefined
        ? []
        : [
            { name: 'firewalls', value: security.firewalls.map((f) => f.name).join(', ') },
            { name: 'login throttling store', value: throttling === undefined ? 'memory (this process)' : 'redis' in throttling ? 'redis' : store(throttling, 'custom') }
          ]
    },
    { name: 'locale', enabled: locale !== undefined, details: locale === undefined ? [] : [{ name: 'enabled', value: locale.enabled.join(', ') }] },
    { name: 'trusted hosts', enabled: options.trustedHosts.length > 0, details: options.trustedHosts.map((host) => ({ name: 'pattern', value: host })) },
    { name: 'robots header', enabled: options.disallowRobotsIndexing, details: [] }
  ]
}

/**
 * The panels of what happens inside the app: the timeline (with the app's stopwatch and its
 * `performance.measure()`s), the templates it renders, its `dump()`s, and the configuration.
 * What each needs beside its collector — the request's stopwatch, the render observer, the
 * measure wrapper and the dump switch — starts with the profiler and stops when the app closes.
 */
export function registerAppPanels (app: FastifyInstance, kernel: Kernel, profiler: Profiler, options: ResolvedKernelOptions): void {
  const views = new ViewObserver()
  profiler
    .extend({ name: 'stopwatch', begin (recording, context) { context.set('stopwatch', new RecordingStopwatch(recording.spans, context.startedAt)) } })
    .extend({ name: 'dumps', end (_recording, context) { settleDumps(context, profiler.origins) } })
    .extend({ name: 'renders', begin (_recording, _context, unit) { if (unit.request !== undefined && unit.reply !== undefined) views.observe(unit.request, unit.reply) } })
  const stopMeasures = observeMeasures()
  const stopDumps = listenToDumps()
  const stopTemplateRuns = observeTemplateRuns()
  app.addHook('onClose', async () => { stopMeasures(); stopDumps(); stopTemplateRuns() })

  const thresholds = profiler.options.thresholds
  kernel
    .addCollector(timeCollector(thresholds.time))
    .addCollector(templatesCollector(thresholds.templates))
    .addCollector(dumpCollector(profiler.origins))
    .addCollector(configCollector(() => ({
      versions: { node: process.versions.node, fastify: app.version, kernel: packageVersion },
      debug: options.debug,
      trace: options.trace,
      features: features(options, profiler),
      plugins: app.printPlugins()
    })))
}
