/**
 * `fastify-kernel listeners <app> [<stage>] [--json]`: every stage's listeners in the order they
 * run, with their priority and origin (Symfony's `debug:event-dispatcher`). Exit 0; 1 when the
 * stage asked for has none.
 */
import type { CommandIo } from './io.js'
import { CommandError, paint, table } from './io.js'
import { STAGES } from '../plugins/console.js'
import { commandArgs, withAppConsole } from './command.js'
import type { ListenerDescription, StageName } from '../plugins/console.js'

export const LISTENERS_USAGE = 'fastify-kernel listeners <app> [<stage: kernel.request, kernel.response, …>] [--json]'

export async function listenersCommand (args: string[], io: CommandIo): Promise<number> {
  const parsed = commandArgs({ args, options: { json: { type: 'boolean' } } }, LISTENERS_USAGE)
  const [path, stage, extra] = parsed.positionals
  if (path === undefined || extra !== undefined) throw new CommandError(`usage: ${LISTENERS_USAGE}`)
  if (stage !== undefined && !(STAGES as readonly string[]).includes(stage)) {
    throw new CommandError(`fastify-kernel: unknown stage "${stage}"; stages are ${STAGES.join(', ')}\nusage: ${LISTENERS_USAGE}`)
  }
  return await withAppConsole(path, (app) => {
    const listeners = app.listeners(stage as StageName | undefined)
    if (parsed.values.json === true) io.out(JSON.stringify(listeners, null, 2))
    else for (const line of listenerLines(listeners, io)) io.out(line)
    return listeners.length > 0 ? 0 : 1
  })
}

/** Each stage as a heading, then its listeners in the order they run. */
function listenerLines (listeners: readonly ListenerDescription[], io: CommandIo): string[] {
  const lines: string[] = []
  for (const stage of STAGES) {
    const ofStage = listeners.filter((listener) => listener.stage === stage)
    if (ofStage.length === 0) continue
    if (lines.length > 0) lines.push('')
    lines.push(paint(io, 'bold', stage))
    const rows = ofStage.map((listener, index) => [`#${index + 1}`, listener.name, String(listener.priority), listener.origin])
    lines.push(...table(io, ['Order', 'Listener', 'Priority', 'Origin'], rows, (_row, column) => column === 1 ? 'green' : undefined).map((line) => `  ${line}`))
  }
  return lines
}
