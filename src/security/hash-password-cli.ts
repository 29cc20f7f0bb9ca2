/**
 * `npm run hash-password -- <password>` prints a scrypt hash for `APP_USERS` or the `users`
 * option; `npm run hash-password -- --token <token>` prints the SHA-256 for `APP_API_TOKENS`.
 * Without an argument the value is read from stdin (keeps it out of the shell history).
 */
import { hashPassword } from './password-hasher.js'
import { hashToken } from './security.js'

async function readStdin (): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '')
}

const args = process.argv.slice(2)
const token = args[0] === '--token'
const value = (token ? args[1] : args[0]) ?? await readStdin()
if (value === '') {
  console.error('usage: npm run hash-password -- <password>   |   npm run hash-password -- --token <token>')
  process.exit(1)
}
console.log(token ? hashToken(value) : await hashPassword(value))
