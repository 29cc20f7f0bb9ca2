/**
 * `fastify-kernel match <app> <path> [--method GET] [--host localhost] [--json]`: the kernel's
 * answer to a request (Symfony's `router:match`), with the routing trace the profiler's routing
 * panel shows. Exit 0 when a route matches (its controller would run), 1 otherwise (301, 404,
 * 405, 400).
 */
import type { CommandIo, Style } from './io.js'
import { CommandError, paint, table } from './io.js'
import { VERDICT_TEXT } from '../plugins/console.js'
import { commandArgs, withAppConsole } from './command.js'
import type { KernelAnswer, RouteTraceLine } from '../plugins/console.js'

export const MATCH_USAGE = 'fastify-kernel match <app> <path> [--method GET] [--host localhost] [--json]'

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

const VERDICT_STYLE: Record<RouteTraceLine['verdict'], Style> = { match: 'green', method: 'yellow', requirement: 'yellow', slash: 'yellow', path: 'dim' }

function answerLines (answer: KernelAnswer, io: CommandIo): string[] {
  const lines = [paint(io, 'bold', `${answer.method} ${answer.url}`)]
  switch (answer.outcome) {
    case 'matched': {
      const route = answer.route
      lines.push(paint(io, 'green', `Route "${route?.name ?? ''}" matches`) + (route === null ? '' : ` (controller ${route.controller})`))
      if (route !== null) {
        lines.push(`  path     ${route.path}`, `  methods  ${route.methods.join(', ')}`)
        for (const [name, value] of Object.entries(route.params)) lines.push(`  param    ${name} = ${JSON.stringify(value)}`)
      }
      break
    }
    case 'redirect':
      lines.push(paint(io, 'yellow', `${String(answer.status)} ${answer.statusText ?? ''}: Location ${answer.location ?? ''}`) + (answer.route === null ? '' : ` (route "${answer.route.name}")`))
      break
    default:
      lines.push(paint(io, 'red', `${String(answer.status)} ${answer.statusText ?? ''}: ${answer.message ?? ''}`))
      if (answer.allow.length > 0) lines.push(`  Allow: ${answer.allow.join(', ')}`)
      if (answer.cause !== null && answer.cause !== '') lines.push(`  cause: ${answer.cause}`)
  }
  lines.push(answer.summary, '', paint(io, 'bold', 'Route matching trace'))
  const rows = answer.trace.map((line) => [line.name, line.methods.join(', '), line.path, VERDICT_TEXT[line.verdict], line.reason])
  lines.push(...table(io, ['Route', 'Methods', 'Path', 'Result', 'Why'], rows, (row, column) => column === 3 ? VERDICT_STYLE[answer.trace[row].verdict] : undefined))
  return lines
}

export async function matchCommand (args: string[], io: CommandIo): Promise<number> {
  const parsed = commandArgs({ args, options: { method: { type: 'string', short: 'm' }, host: { type: 'string' }, json: { type: 'boolean' } } }, MATCH_USAGE)
  const [path, target, extra] = parsed.positionals
  if (path === undefined || target === undefined || extra !== undefined) throw new CommandError(`usage: ${MATCH_USAGE}`)
  if (!target.startsWith('/')) throw new CommandError(`fastify-kernel: the path must start with "/": "${target}"\nusage: ${MATCH_USAGE}`)
  const method = (parsed.values.method ?? 'GET').toUpperCase()
  if (!TOKEN.test(method)) throw new CommandError(`fastify-kernel: "${method}" is not an HTTP method\nusage: ${MATCH_USAGE}`)
  const host = parsed.values.host ?? 'localhost'
  return await withAppConsole(path, async (app) => {
    const answer = await app.match(method, target, host)
    if (parsed.values.json === true) io.out(JSON.stringify(answer, null, 2))
    else for (const line of answerLines(answer, io)) io.out(line)
    return answer.outcome === 'matched' ? 0 : 1
  })
}
