import type { PanelReader } from '../findings.js'
import type { Thresholds } from '../options.js'
import { exceptionReader } from './exception-findings.js'
import { logsReader } from './logs-findings.js'
import { dbReader } from './db-findings.js'
import { cacheReader } from './cache-findings.js'
import { httpClientReader } from './http-client-findings.js'
import { templatesReader } from './templates-findings.js'
import { dumpReader } from './dump-findings.js'
import { timeReader } from './time-findings.js'

/**
 * The built-in panels' readers, in the order a comparison lists them: what each tells agents
 * and scripts (flags, triage's findings, a comparison's figures). Given to the profiler by its
 * plugin; each moves with its collector.
 */
export function panelReaders (thresholds: Thresholds): Array<PanelReader<any>> {
  return [
    timeReader(thresholds.time),
    exceptionReader,
    logsReader,
    dbReader(thresholds.slow_statement),
    cacheReader,
    httpClientReader(thresholds.slow_http_call),
    templatesReader,
    dumpReader
  ]
}
