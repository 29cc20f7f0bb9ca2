import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { resolve } from 'node:path'
import { root } from '../../test/build-once.js'

export const main = resolve(root, 'service/dist/main.js')

/** A service process (the compiled `npm start`), on a free port; stopped by the test through its own PID. */
export interface ServiceProcess {
  child: ChildProcess
  /** stdout and stderr so far */
  output: () => string
  /** `http://127.0.0.1:<port>` once it listens */
  base: string
}

export function spawnService (env: Record<string, string>, script = main): { child: ChildProcess, output: () => string } {
  const child = spawn(process.execPath, [script], { cwd: root, env: { PATH: process.env.PATH, APP_ENV: 'test', HOST: '127.0.0.1', PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString() })
  return { child, output: () => output }
}

/** Starts a service and waits until it listens; the test's teardown stops it (SIGTERM to its PID). */
export async function startService (t: { teardown: (fn: () => unknown) => void }, env: Record<string, string>): Promise<ServiceProcess> {
  const { child, output } = spawnService(env)
  t.teardown(() => stopProcess(child))
  for (let i = 0; i < 400; i++) {
    const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output())
    if (m !== null) return { child, output, base: m[1] }
    if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}): ${output()}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`the service did not start: ${output()}`)
}

export async function stopProcess (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  await exited
}
