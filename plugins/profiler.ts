import cluster from 'node:cluster'
import { resolve } from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { Kernel } from '../src/kernel/kernel.js'
import type { ResolvedKernelOptions } from './kernel-options.js'
import { Priority, Stage } from '../src/kernel/stages.js'
import { subscription } from '../src/kernel/dispatcher.js'
import { errorCodes } from '../src/errors/codes.js'
import { Redactor } from '../src/http/redact.js'
import { packageVersion } from '../src/config/paths.js'
import type { Clock } from '../src/clock.js'
import type { ResolvedProfilerOptions } from '../src/profiler/options.js'
import { Profiler } from '../src/profiler/profiler.js'
import type { RecordingExtension } from '../src/profiler/recorder.js'
import { REQUEST_KIND } from '../src/profiler/unit.js'
import { unitLogChannels } from '../src/profiler/unit-logs.js'
import { WebDebugToolbar } from '../src/profiler/toolbar/toolbar.js'
import type { ProfileStorage } from '../src/profiler/storage/storage.js'
import { MemoryProfileStorage } from '../src/profiler/storage/memory.js'
import { FileProfileStorage } from '../src/profiler/storage/file.js'
import { RedisProfileStorage } from '../src/profiler/storage/redis.js'
import { FileProfileReader } from '../src/profiler/storage/file-reader.js'
import { profilesReadOnly } from '../src/profiler/storage/read-only.js'
import { defaultProfilerDirectory } from '../src/profiler/storage/app-root.js'
import type { ConfiguredFeature } from '../src/profiler/integration.js'
import { setUpIntegrations } from '../src/profiler/integrations.js'
import { builtInIntegrations } from '../src/profiler/panels/index.js'
import { registerProfilerController } from './profiler-controller.js'

async function openStorage (options: ResolvedProfilerOptions, app: FastifyInstance, clock: Clock): Promise<ProfileStorage> {
  // the app's own, used as is
  if (typeof options.storage === 'object') return options.storage
  if (options.storage === 'redis') {
    try {
      return await RedisProfileStorage.open({ ...options.redis!, maxProfiles: options.maxProfiles, maxAgeMs: options.maxAgeMs, log: app.log, clock })
    } catch (error) {
      throw new errorCodes.KERNEL_REDIS_UNAVAILABLE(`${(error as Error).message}`, { cause: error })
    }
  }
  if (options.storage === 'file') {
    // every process of the app finds the same folder: under its root, whatever its working directory
    const directory = options.directory = resolve(options.directory ?? defaultProfilerDirectory())
    // the console reading the app's profiles: the folder is the running processes'
    if (profilesReadOnly()) return new FileProfileReader(directory, { maxProfiles: options.maxProfiles, maxAgeMs: options.maxAgeMs }, app.log, clock)
    try {
      return await FileProfileStorage.open(directory, { maxProfiles: options.maxProfiles, maxAgeMs: options.maxAgeMs }, app.log, { clock })
    } catch (error) {
      throw new errorCodes.KERNEL_INVALID_OPTIONS(`the profiler cannot use its folder "${directory}": ${(error as Error).message}`, { cause: error })
    }
  }
  return new MemoryProfileStorage({ maxProfiles: options.maxProfiles, maxAgeMs: options.maxAgeMs, maxBytes: options.maxMemory }, clock)
}

/**
 * A process that serves no HTTP (a queue worker, a command) recording units into its own
 * memory: nobody can open them. Said once, when its first unit begins (a process cannot know
 * at register whether it will listen).
 */
function memoryUnseen (app: FastifyInstance): RecordingExtension {
  let said = false
  return {
    name: 'memory storage warning',
    begin (_recording, _context, unit) {
      if (said || unit.kind === REQUEST_KIND || app.server.listening) return
      said = true
      app.log.warn(`fastify-kernel: the profiler keeps profiles in this process's memory (profiler.storage: 'memory'), and this process serves no HTTP: the profiles of its ${unit.kind}s cannot be opened from any other process. The default file storage (or Redis) shares them with the app's server.`)
    }
  }
}

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

/**
 * The web profiler (debug only), composed: its storage, the profiler (stage listeners record
 * every request, `kernel.terminate` stores it), its integrations — the built-in panels not
 * switched off, then the app's own — and its pages (`profiler-controller.ts`). In production
 * nothing is added at all.
 */
export async function registerProfiler (app: FastifyInstance, kernel: Kernel, profilerOptions: ResolvedProfilerOptions, options: ResolvedKernelOptions): Promise<void> {
  // its redact options are the policy of every output (pages, profiles, production's logs too)
  kernel.redactor = new Redactor(profilerOptions.redactNames, profilerOptions.redactPattern)
  if (!options.debug) {
    // the app's own storage was handed over in every mode: production never uses it, and closes it with the app
    const handed = profilerOptions.storage
    if (typeof handed === 'object') app.addHook('onClose', async () => { await handed.close() })
    return
  }

  const storage = await openStorage(profilerOptions, app, options.clock)
  if (profilerOptions.storage === 'memory' && cluster.isWorker) {
    app.log.warn('fastify-kernel: the profiler keeps profiles in this process\'s memory, and this is a node:cluster worker: a token shown by one worker is "not found" on the others. The default file storage (or Redis) shares profiles between processes.')
  }
  if (profilerOptions.storage === 'file' && !profilesReadOnly()) {
    app.log.info({ directory: profilerOptions.directory }, `fastify-kernel: the profiler keeps profiles in ${profilerOptions.directory ?? ''}, shared by every process of this app (its servers, workers, commands)`)
  }
  const profiler = new Profiler(profilerOptions, storage, kernel, app.log)
  if (profilerOptions.storage === 'memory') profiler.extend(memoryUnseen(app))
  app.decorate('kernelProfiler', profiler)
  // the storage is the profiler's, the app's own too (whatever client it was lent stays the app's):
  // closed after the last saves. (An app's onClose hook added after the kernel runs before this one.)
  app.addHook('onClose', async () => { await profiler.settled(); await storage.close() })

  // each request's log records, captured where Fastify creates request.log
  // (not for a path never profiled, nor while capture is paused for the event loop's lag)
  app.setChildLoggerFactory(profiler.logCapture.factory(app.childLoggerFactory, (url) => !profiler.saturated && profiler.guards.admitsTarget(url)))
  app.addHook('onClose', async () => { profiler.guards.close() })
  // other units' records, from whichever pino logger writes them (once per process while a profiler is alive)
  const releaseUnitLogs = unitLogChannels.retain()
  app.addHook('onClose', async () => { releaseUnitLogs() })

  kernel.subscribe(profiler.requests.subscriptions, 'profiler')
  // what a unit calls (HTTP, SQL, Redis…) is attributed to it through its async context
  kernel.tracksAsyncContext = true
  kernel.errorPageExtensions.push(profiler.requests.errorPage)
  if (profilerOptions.toolbar) {
    kernel.subscribe([subscription(Stage.RESPONSE, Priority.WEB_DEBUG_TOOLBAR, 'web debug toolbar', new WebDebugToolbar(profiler.admission.admits, profilerOptions.toolbarAjaxReplace).listener)], 'profiler')
  }

  // the panels: the built-in ones not switched off, then the app's; features (session, security,
  // locale) add their collectors to the kernel themselves
  const integrations = await setUpIntegrations([
    ...builtInIntegrations.filter((integration) => !profilerOptions.panelsOff.has(integration.name)),
    ...profilerOptions.integrations
  ], profiler, {
    kernel,
    clock: options.clock,
    trace: options.trace,
    describeApp: () => ({
      versions: { node: process.versions.node, fastify: app.version, kernel: packageVersion },
      debug: options.debug,
      trace: options.trace,
      features: features(options, profiler),
      plugins: app.printPlugins()
    })
  }, app.log)
  app.addHook('onClose', async () => { await integrations.close() })

  await registerProfilerController(app, kernel, profiler, integrations)
}
