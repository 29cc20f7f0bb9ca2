import type { FastifyInstance } from 'fastify'
import type { Kernel } from '../src/kernel/kernel.js'
import type { ResolvedProfilerOptions } from '../src/profiler/options.js'
import { ioChannels } from '../src/profiler/panels/index.js'
import { httpClientCollector } from '../src/profiler/panels/http-client/collector.js'
import { dbCollector } from '../src/profiler/panels/db/collector.js'
import { cacheCollector } from '../src/profiler/panels/cache/collector.js'

/**
 * The panels of what a request calls outside the process: HTTP Client, Database, Cache. Their
 * libraries' diagnostics channels are subscribed while this app is open (once per process,
 * whatever the number of apps); nothing else is needed of the app.
 */
export function registerIoPanels (app: FastifyInstance, kernel: Kernel, options: ResolvedProfilerOptions): void {
  const release = ioChannels.retain()
  app.addHook('onClose', async () => { release() })
  const { thresholds } = options
  kernel
    .addCollector(dbCollector({ totalMs: thresholds.db, slowMs: thresholds.slow_statement }))
    .addCollector(cacheCollector(thresholds.cache))
    .addCollector(httpClientCollector({ totalMs: thresholds.http_client, slowMs: thresholds.slow_http_call }))
}
