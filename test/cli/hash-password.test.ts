import t from 'tap'
import { execFileSync } from 'node:child_process'
import { resolve } from 'node:path'
import { buildOnce, root } from '../build-once.js'
import { verifyPassword, hashToken } from '../../src/security/index.js'

const cli = resolve(root, 'dist/cli/bin.js')
buildOnce()

t.test('hash-password prints a scrypt hash that verifies, or a token digest', async (t) => {
  const hash = execFileSync(process.execPath, [cli, 'hash-password', 'correct horse'], { encoding: 'utf8' }).trim()
  t.match(hash, /^\$scrypt\$ln=15,r=8,p=1\$/)
  t.equal(await verifyPassword('correct horse', hash), true)
  const fromStdin = execFileSync(process.execPath, [cli, 'hash-password'], { encoding: 'utf8', input: 'from stdin\n' }).trim()
  t.equal(await verifyPassword('from stdin', fromStdin), true, 'the trailing newline is not part of the password')
  t.equal(execFileSync(process.execPath, [cli, 'hash-password', '--token', 'abc'], { encoding: 'utf8' }).trim(), hashToken('abc'))
})
