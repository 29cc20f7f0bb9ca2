/**
 * `fastify-kernel profile <app> <token|latest> [--json]`: a stored profile's summary (status,
 * time, duration, flags, each panel with its figure) from the app's profiler storage, for a
 * terminal or a CI log; `profile find` lists profiles by filters and flags (`--issues`),
 * `profile triage` says what is wrong with one, `profile diff` compares two: the answers of the
 * profiler's agent tools (`list_profiles`, `triage_profile`, `compare_profiles`), in a table or
 * as JSON. The file and Redis storages are read from any process (a running server's folder is
 * only read); a memory storage holds what its own process stored, so the console, another
 * process, finds nothing there. Exit 0; 1 when there is no such profile (`find`: none matches).
 */
import type { CommandIo } from './io.js'
import { CommandError, paint, table } from './io.js'
import { FLAG_NAMES, PLAIN, TOKEN_PATTERN, compareText, statusOfSummary, triageText } from '../plugins/console.js'
import type { AppConsole, CompareAnswer, ListAnswer, ProfileReport, TriageAnswer } from '../plugins/console.js'
import { commandArgs, withAppConsole } from './command.js'

export const PROFILE_USAGE = 'fastify-kernel profile <app> <token|latest> [--json]   |   profile find <app> [--issues] [--flag <name>]… [--method GET] [--url <part>] [--status 5xx] [--kind job] [--min-duration <ms>] [--limit 20] [--json]   |   profile triage <app> [<token|latest>] [--json]   |   profile diff <app> <token A> <token B> [--json]'

const MEMORY_NOTE = 'The app keeps its profiles in memory (profiler storage "memory"): only the process that served a request has its profile, and this one served none. To read a server\'s profiles from the console, give the profiler the file storage (profiler.storage: "file") or the Redis storage.'

const FIND_OPTIONS = {
  json: { type: 'boolean' },
  issues: { type: 'boolean' },
  flag: { type: 'string', multiple: true },
  method: { type: 'string' },
  url: { type: 'string' },
  status: { type: 'string' },
  kind: { type: 'string' },
  'min-duration': { type: 'string' },
  limit: { type: 'string' },
  offset: { type: 'string' }
} as const

function tokenArg (ref: string): string {
  if (ref !== 'latest' && !TOKEN_PATTERN.test(ref)) throw new CommandError(`fastify-kernel: "${ref}" is not a profile token (six hexadecimal characters, as X-Debug-Token gives) nor "latest"\nusage: ${PROFILE_USAGE}`)
  return ref
}

function count (value: string | undefined, name: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined
  const number = Number(value)
  if (value.trim() === '' || !Number.isFinite(number) || number < min || number > max || (name !== 'min-duration' && !Number.isInteger(number))) throw new CommandError(`fastify-kernel: --${name} "${value}" is not a number from ${min} to ${max}\nusage: ${PROFILE_USAGE}`)
  return number
}

/** The filters of `profile find`, checked as the tool's input schema checks an agent's. */
function findInput (values: { [K in keyof typeof FIND_OPTIONS]?: (typeof FIND_OPTIONS)[K]['type'] extends 'boolean' ? boolean : K extends 'flag' ? string[] : string }): Record<string, unknown> {
  const input: Record<string, unknown> = {}
  for (const flag of values.flag ?? []) if (!(FLAG_NAMES as readonly string[]).includes(flag)) throw new CommandError(`fastify-kernel: unknown flag "${flag}"; flags are ${FLAG_NAMES.join(', ')}\nusage: ${PROFILE_USAGE}`)
  if (values.flag !== undefined) input.flags = values.flag
  if (values.issues === true) input.issues = true
  if (values.method !== undefined) {
    if (!/^[A-Za-z]{1,16}$/.test(values.method)) throw new CommandError(`fastify-kernel: "${values.method}" is not an HTTP method\nusage: ${PROFILE_USAGE}`)
    input.method = values.method
  }
  if (values.status !== undefined) {
    if (!/^([1-5]\d\d|[1-5]xx)$/i.test(values.status)) throw new CommandError(`fastify-kernel: --status "${values.status}" is not a status (404) nor a class (4xx)\nusage: ${PROFILE_USAGE}`)
    input.status = values.status.toLowerCase()
  }
  if (values.kind !== undefined) {
    if (!/^[a-z][a-z0-9_-]{0,31}$/.test(values.kind)) throw new CommandError(`fastify-kernel: "${values.kind}" is not a kind of unit (request, job, command…)\nusage: ${PROFILE_USAGE}`)
    input.kind = values.kind
  }
  if (values.url !== undefined) input.url = values.url.slice(0, 2048)
  const minDuration = count(values['min-duration'], 'min-duration', 0, 1e9)
  if (minDuration !== undefined) input.minDuration = minDuration
  const limit = count(values.limit, 'limit', 1, 100)
  if (limit !== undefined) input.limit = limit
  const offset = count(values.offset, 'offset', 0, 1_000_000)
  if (offset !== undefined) input.offset = offset
  return input
}

/** A tool's answer printed: its JSON, or the lines `text` makes of it; exit 1 with its error. */
async function answer<T> (app: AppConsole, io: CommandIo, json: boolean, run: () => Promise<{ structured?: T, error?: string }>, text: (structured: T) => string[]): Promise<number> {
  const result = await run()
  if (result.error !== undefined) {
    io.err(`fastify-kernel: ${result.error}`)
    if (!app.profileSource().shared) io.err(MEMORY_NOTE)
    return 1
  }
  if (json) io.out(JSON.stringify(result.structured, null, 2))
  else for (const line of text(result.structured!)) io.out(line)
  return 0
}

async function findCommand (args: string[], io: CommandIo): Promise<number> {
  const parsed = commandArgs({ args, options: FIND_OPTIONS }, PROFILE_USAGE)
  const [path, extra] = parsed.positionals
  if (path === undefined || extra !== undefined) throw new CommandError(`usage: ${PROFILE_USAGE}`)
  const input = findInput(parsed.values)
  return await withAppConsole(path, async (app) => {
    const found = await app.tool<ListAnswer>('list_profiles', input)
    const list = found.structured!
    if (parsed.values.json === true) io.out(JSON.stringify(list, null, 2))
    else if (list.profiles.length > 0) {
      const rows = list.profiles.map((p) => [p.token, p.method, p.url, statusOfSummary(p).statusText, `${p.duration.toFixed(1)} ms`, (p.flags ?? []).join(', ')])
      for (const line of table(io, ['Token', 'Method', 'URL', 'Status', 'Duration', 'Flags'], rows, (_row, column) => column === 0 ? 'cyan' : column === 5 ? 'yellow' : undefined)) io.out(line)
      if (list.nextOffset !== null) io.out(`More: --offset ${list.nextOffset}`)
    }
    if (list.profiles.length > 0) return 0
    io.err(`fastify-kernel: no profile matches in the ${list.storage} storage`)
    if (!app.profileSource().shared) io.err(MEMORY_NOTE)
    return 1
  })
}

async function triageCommand (args: string[], io: CommandIo): Promise<number> {
  const parsed = commandArgs({ args, options: { json: { type: 'boolean' }, limit: { type: 'string' } } }, PROFILE_USAGE)
  const [path, ref = 'latest', extra] = parsed.positionals
  if (path === undefined || extra !== undefined) throw new CommandError(`usage: ${PROFILE_USAGE}`)
  const limit = count(parsed.values.limit, 'limit', 1, 50)
  const input = { token: tokenArg(ref), ...(limit === undefined ? {} : { limit }) }
  return await withAppConsole(path, async (app) => await answer<TriageAnswer>(app, io, parsed.values.json === true, async () => await app.tool<TriageAnswer>('triage_profile', input), (triage) => triageText(triage, PLAIN).split('\n')))
}

async function diffCommand (args: string[], io: CommandIo): Promise<number> {
  const parsed = commandArgs({ args, options: { json: { type: 'boolean' } } }, PROFILE_USAGE)
  const [path, a, b, extra] = parsed.positionals
  if (path === undefined || a === undefined || b === undefined || extra !== undefined) throw new CommandError(`usage: ${PROFILE_USAGE}`)
  const input = { a: tokenArg(a), b: tokenArg(b) }
  return await withAppConsole(path, async (app) => await answer<CompareAnswer>(app, io, parsed.values.json === true, async () => await app.tool<CompareAnswer>('compare_profiles', input), (diff) => compareText(diff, PLAIN).split('\n')))
}

const SUBCOMMANDS: Record<string, (args: string[], io: CommandIo) => Promise<number>> = { find: findCommand, triage: triageCommand, diff: diffCommand }

export async function profileCommand (args: string[], io: CommandIo): Promise<number> {
  const sub = args[0] === undefined ? undefined : SUBCOMMANDS[args[0]]
  if (sub !== undefined) return await sub(args.slice(1), io)
  const parsed = commandArgs({ args, options: { json: { type: 'boolean' } } }, PROFILE_USAGE)
  const [path, ref, extra] = parsed.positionals
  if (path === undefined || ref === undefined || extra !== undefined) throw new CommandError(`usage: ${PROFILE_USAGE}`)
  tokenArg(ref)
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
    ...(profile.flags === undefined || profile.flags.length === 0 ? [] : [['Flags', paint(io, 'yellow', profile.flags.join(', '))]]),
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
