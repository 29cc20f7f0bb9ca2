import type { ProfilerIntegration } from '../integration.js'
import { request } from './request/index.js'
import { exception } from './exception/index.js'
import { logs } from './logs/index.js'
import { routing } from './routing/index.js'
import { events } from './events/index.js'
import { time } from './time/index.js'
import { templates } from './templates/index.js'
import { dump } from './dump/index.js'
import { config } from './config/index.js'
import { httpClient } from './http-client/index.js'
import { db } from './db/index.js'
import { cache } from './cache/index.js'
import { queue } from './queue/index.js'
import { mail } from './mail/index.js'
import { cpu } from './cpu/index.js'

/**
 * The built-in panels, one integration each (a folder of `panels/`), in the order they are set
 * up. The composition (`plugins/profiler.ts`) sets them up beside the app's own; the profiler's
 * core knows none of them. `profiler: { panels: { <name>: false } }` leaves one out.
 */
export const builtInIntegrations: readonly ProfilerIntegration[] = [
  request,
  exception,
  logs,
  routing,
  events,
  time,
  templates,
  dump,
  config,
  httpClient,
  db,
  cache,
  queue,
  mail,
  cpu
]
