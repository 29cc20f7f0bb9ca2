/**
 * The `fastify-kernel` command. Exit codes: 0 success, 1 a negative answer, 2 a usage error.
 */
import { HASH_PASSWORD_USAGE, hashPasswordCommand } from './hash-password.js'
import type { CommandIo } from './io.js'

type Command = (args: string[], io: CommandIo) => Promise<number>

const COMMANDS: Record<string, { run: Command, usage: string }> = {
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
  return await command.run(args, io)
}
