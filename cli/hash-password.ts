/**
 * `fastify-kernel hash-password <password>` prints a scrypt hash for the `users` option (or the
 * service's `APP_USERS`); `fastify-kernel hash-password --token <token>` prints the SHA-256 that
 * the `bearer.tokens` option (`APP_API_TOKENS`) holds. Without a value it is read from stdin,
 * which keeps it out of the shell history.
 */
import { hashPassword, hashToken } from '../src/security/index.js'
import type { CommandIo } from './io.js'

async function readAll (input: AsyncIterable<unknown>): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of input) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)))
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '')
}

export const HASH_PASSWORD_USAGE = 'fastify-kernel hash-password [<password>]   |   fastify-kernel hash-password --token [<token>]'

export async function hashPasswordCommand (args: string[], io: CommandIo): Promise<number> {
  const token = args[0] === '--token'
  const rest = token ? args.slice(1) : args
  if (rest.length > 1 || rest.some((arg) => arg.startsWith('--'))) {
    io.err(`usage: ${HASH_PASSWORD_USAGE}`)
    return 2
  }
  const value = rest[0] ?? await readAll(io.stdin)
  if (value === '') {
    io.err(`usage: ${HASH_PASSWORD_USAGE}`)
    return 2
  }
  io.out(token ? hashToken(value) : await hashPassword(value))
  return 0
}
