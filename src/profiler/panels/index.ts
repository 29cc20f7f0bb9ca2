import { formatSpansWith, settleSpansWith } from '../spans.js'
import { ProcessChannels } from '../instrument/channels.js'
import { HTTP_CLIENT, formatHttpClientSpan, httpClientChannels, settleHttpClientSpan } from './http-client/capture.js'
import { DB, dbChannels, formatDbSpan, settleDbSpan } from './db/capture.js'
import { CACHE, cacheChannels, formatCacheSpan, settleCacheSpan } from './cache/capture.js'
import { instrumentModules } from '../instrument/modules.js'
import { pgChannels, pgInstrumentation, pgPoolInstrumentation } from './db/pg.js'
import { betterSqlite3Instrumentation, sqliteChannels } from './db/sqlite.js'

/**
 * The channels of what a request calls outside the process (HTTP, SQL, Redis), subscribed once
 * per process while a profiler is alive; and the libraries that publish nothing (pg,
 * better-sqlite3), instrumented for as long (their app's copies, restored after the last
 * profiler).
 */
export const ioChannels = new ProcessChannels(() => [
  ...httpClientChannels, ...dbChannels, ...pgChannels, ...sqliteChannels, ...cacheChannels,
  { instrument: () => instrumentModules([pgInstrumentation, pgPoolInstrumentation, betterSqlite3Instrumentation]) }
])

formatSpansWith(HTTP_CLIENT, formatHttpClientSpan)
formatSpansWith(DB, formatDbSpan)
formatSpansWith(CACHE, formatCacheSpan)
settleSpansWith(HTTP_CLIENT, settleHttpClientSpan)
settleSpansWith(DB, settleDbSpan)
settleSpansWith(CACHE, settleCacheSpan)

export { DB_CHANNEL } from './db/capture.js'
