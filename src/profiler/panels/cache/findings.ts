import type { Finding, PanelReader } from '../../findings.js'
import { commonOrigin, ms, originOf } from '../../findings.js'
import type { CacheData } from './collector.js'
import { analyse, commandShape } from './collector.js'
import { CACHE } from './capture.js'

/**
 * What the Cache panel tells agents and scripts: the flags (likely N+1, failed commands),
 * triage's findings (each repeated command shape with its count, time and the app's line that
 * sent it; failures) and a comparison's figures (commands, time, shapes). The app's commands
 * only, as on the toolbar.
 */
export const cacheReader: PanelReader<CacheData> = {
  panel: CACHE,
  flags (data) {
    const { app, repeated } = analyse(data)
    const flags: string[] = []
    if (repeated.length > 0) flags.push('n_plus_one')
    if (app.some((command) => command.error !== undefined)) flags.push('failed_calls')
    return flags
  },
  findings (data) {
    const { app, repeated } = analyse(data)
    const findings: Finding[] = repeated.map((group) => ({
      kind: 'n_plus_one',
      panel: CACHE,
      severity: 'warning',
      title: `Likely N+1: ${group.count} Redis commands of one shape, ${group.variants} different keys`,
      advice: 'One command runs per item of a list: send them at once (MGET, a pipeline, HMGET) where the loop at the origin sends them.',
      count: group.count,
      timeMs: group.totalMs,
      origin: commonOrigin(app.filter((command) => command.command !== 'MULTI' && commandShape(command) === group.shape).map((command) => command.origin)),
      data: group.shape
    }))
    for (const command of app.filter((c) => c.error !== undefined)) {
      findings.push({ kind: 'failed_call', panel: CACHE, severity: 'error', title: 'A Redis command failed', advice: 'Read Redis\'s message (before the command in `data`); the origin is the app\'s line that sent it.', count: 1, timeMs: command.duration ?? undefined, origin: originOf(command.origin), data: `${command.error ?? ''} | ${[command.command, ...command.keys].join(' ')}` })
    }
    return findings
  },
  figures (data) {
    const { app, repeated } = analyse(data)
    const shapes: Record<string, number> = {}
    let timeMs = 0
    for (const command of app) {
      const shape = commandShape(command)
      shapes[shape] = (shapes[shape] ?? 0) + 1
      timeMs += command.duration ?? 0
    }
    return { label: 'Cache', measures: { commands: app.length, timeMs: ms(timeMs), failed: app.filter((c) => c.error !== undefined).length }, shapes, nPlusOne: repeated.map((group) => group.shape) }
  }
}
