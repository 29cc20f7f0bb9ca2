import { formatSpansWith } from '../spans.js'
import { ProcessChannels } from './channels.js'
import { HTTP_CLIENT, formatHttpClientSpan, httpClientChannels } from './http-client.js'
import { DB, dbChannels, formatDbSpan } from './db.js'
import { CACHE, cacheChannels, formatCacheSpan } from './cache.js'

/**
 * The channels of what a request calls outside the process (HTTP, SQL, Redis), subscribed once
 * per process while a profiler is alive.
 */
export const ioChannels = new ProcessChannels(() => [...httpClientChannels, ...dbChannels, ...cacheChannels])

formatSpansWith(HTTP_CLIENT, formatHttpClientSpan)
formatSpansWith(DB, formatDbSpan)
formatSpansWith(CACHE, formatCacheSpan)

export { DB_CHANNEL } from './db.js'
