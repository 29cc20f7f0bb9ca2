import type { ProfilerIntegration } from '../../integration.js'
import { CACHE, cacheChannels, formatCacheSpan, settleCacheSpan } from './capture.js'
import { cacheCollector } from './collector.js'
import { cacheReader } from './findings.js'

/** The Cache panel: the Redis commands a unit ran, from ioredis' and node-redis' tracing channels. */
export const cache: ProfilerIntegration = {
  name: 'cache',
  channels: cacheChannels,
  spans: { [CACHE]: { settle: settleCacheSpan, format: formatCacheSpan } },
  setup: ({ profiler }) => ({ collectors: [cacheCollector(profiler.options.thresholds.cache)], readers: [cacheReader] })
}
