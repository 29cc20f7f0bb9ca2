import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import { buildOnce, root } from '../build-once.js'

const cli = resolve(root, 'dist/cli/bin.js')

export const fixture = (name: string): string => `test/cli/fixtures/${name}`

/** Runs the compiled `fastify-kernel` bin from the repository root, output piped. */
export function runCli (args: string[], env: Record<string, string> = {}): { status: number | null, stdout: string, stderr: string } {
  buildOnce()
  const result = spawnSync(process.execPath, [cli, ...args], {
    cwd: root,
    encoding: 'utf8',
    // colours are decided by the command, not inherited from the test runner's environment
    env: { ...process.env, FORCE_COLOR: '', NO_COLOR: '', ...env },
    timeout: 60_000
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}
