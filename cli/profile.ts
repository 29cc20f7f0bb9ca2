/**
 * `fastify-kernel profile <app> <token|latest> [--json]`: a stored profile's summary (status,
 * time, duration, each panel with its figure) from the app's profiler storage, for a terminal
 * or a CI log. The file and Redis storages are read from any process (a running server's
 * folder is only read); a memory storage holds what its own process stored, so the console,
 * another process, finds nothing there. Exit 0; 1 when there is no such profile.
 */
import type { CommandIo } from './io.js'
import { CommandError, paint, table } from './io.js'
import { TOKEN_PATTERN, statusOfSummary } from '../plugins/console.js'
import type { ProfileReport } from '../plugins/console.js'
import { commandArgs, withAppConsole } from './command.js'

export const PROFILE_USAGE = 'fastify-kernel profile <app> <token|latest> [--json]'

const MEMORY_NOTE = 'The app keeps its profiles in memory (profiler storage "memory"): only the process that served a request has its profile, and this one served none. To read a server\'s profiles from the console, give the profiler the file storage (profiler.storage: "file") or the Redis storage.'

export async function profileCommand (args: string[], io: CommandIo): Promise<number> {
  const parsed = commandArgs({ args, options: { json: { type: 'boolean' } } }, PROFILE_USAGE)
  const [path, ref, extra] = parsed.positionals
  if (path === undefined || ref === undefined || extra !== undefined) throw new CommandError(`usage: ${PROFILE_USAGE}`)
  if (ref !== 'latest' && !TOKEN_PATTERN.test(ref)) throw new CommandError(`fastify-kernel: "${ref}" is not a profile token (six hexadecimal characters, as X-Debug-Token gives) nor "latest"\nusage: ${PROFILE_USAGE}`)
  return await withAppConsole(path, async (app) => {
    const report = await app.profile(ref)
    if (parsed.values.json === true) io.out(JSON.stringify(report, null, 2))
    else for (const line of profileLines(report, io)) io.out(line)
    if (report.profile !== null) return 0
    io.err(ref === 'latest' ? `fastify-kernel: no profile in the ${report.storage.kind} storage` : `fastify-kernel: no profile "${ref}" in the ${report.storage.kind} storage (unknown, expired or purged)`)
    if (!report.storage.shared) io.err(MEMORY_NOTE)
    return 1
  })
}

function profileLines ({ profile, storage }: ProfileReport, io: CommandIo): string[] {
  if (profile === null) return []
  const { statusText, statusKind } = statusOfSummary(profile)
  const statusStyle = statusKind === 'error' ? 'red' : statusKind === 'warning' ? 'yellow' : 'green'
  const unit = profile.kind !== undefined && profile.kind !== 'request'
  const facts = [
    ...(unit ? [['Kind', profile.kind!]] : []),
    ['Status', paint(io, statusStyle, statusText) + (profile.aborted ? ' (the client went away first)' : '')],
    ['Time', new Date(profile.time).toISOString()],
    ['Duration', `${profile.duration.toFixed(1)} ms`],
    ...(unit ? [] : [['Client', profile.ip]]),
    ...(profile.parent === undefined ? [] : [['Part of', profile.parent]]),
    ['Storage', storage.kind]
  ]
  const width = Math.max(...facts.map(([name]) => name.length))
  return [
    `${paint(io, 'bold', `Profile ${profile.token}`)}  ${profile.method} ${profile.url}`,
    ...facts.map(([name, value]) => `  ${name.padEnd(width)}  ${value}`),
    '',
    ...table(io, ['Panel', 'Label', 'Figure'], profile.panels.map((panel) => [panel.name, panel.label, panel.figure ?? '']), (_row, column) => column === 0 ? 'cyan' : undefined)
  ]
}
