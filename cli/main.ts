/**
 * The `fastify-kernel` command. Exit codes: 0 success, 1 a negative answer (no route matches),
 * 2 a command that could not run (usage, an app module that cannot be loaded).
 */
import { HASH_PASSWORD_USAGE, hashPasswordCommand } from './hash-password.js'
import type { CommandIo } from './io.js'
import { CommandError } from './io.js'
import { MATCH_USAGE, matchCommand } from './match.js'
import { ROUTES_USAGE, routesCommand } from './routes.js'
import { LISTENERS_USAGE, listenersCommand } from './listeners.js'
import { PROFILE_USAGE, profileCommand } from './profile.js'
import { MCP_USAGE, mcpCommand } from './mcp.js'

type Command = (args: string[], io: CommandIo) => Promise<number>

const COMMANDS: Record<string, { run: Command, usage: string }> = {
  routes: { run: routesCommand, usage: ROUTES_USAGE },
  match: { run: matchCommand, usage: MATCH_USAGE },
  listeners: { run: listenersCommand, usage: LISTENERS_USAGE },
  profile: { run: profileCommand, usage: PROFILE_USAGE },
  mcp: { run: mcpCommand, usage: MCP_USAGE },
  'hash-password': { run: hashPasswordCommand, usage: HASH_PASSWORD_USAGE }
}

function usage (): string {
  return ['usage:', ...Object.values(COMMANDS).map((command) => `  ${command.usage}`)].join('\n')
}

export async function main (argv: string[], io: CommandIo): Promise<number> {
  const [name, ...args] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(usage())
    return name === undefined ? 2 : 0
  }
  const command = COMMANDS[name]
  if (command === undefined) {
    io.err(`fastify-kernel: unknown command "${name}"\n${usage()}`)
    return 2
  }
  try {
    return await command.run(args, io)
  } catch (error) {
    // 1 means "no match": a command that could not run at all (usage, an app that does not
    // load) says so with 2, and in one line
    const expected = error instanceof CommandError || (error as { code?: unknown }).code === 'KERNEL_CONSOLE_APP'
    io.err(expected ? (error as Error).message : `fastify-kernel ${name}: ${(error as Error).stack ?? String(error)}`)
    return error instanceof CommandError ? error.exitCode : 2
  }
}
