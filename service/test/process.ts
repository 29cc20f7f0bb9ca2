import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { EventEmitter, once } from 'node:events'
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

export interface SpawnedService {
  child: ChildProcess
  output: () => string
  /**
   * The first match of `pattern` in the output, as soon as the process writes it; null if the
   * process exits first, or has not written it within `deadlineMs` (a guard: a broken service
   * fails its test rather than hanging it)
   */
  waitFor: (pattern: RegExp, deadlineMs?: number) => Promise<RegExpExecArray | null>
}

export function spawnService (env: Record<string, string>, script = main): SpawnedService {
  const child = spawn(process.execPath, [script], { cwd: root, env: { PATH: process.env.PATH, APP_ENV: 'test', HOST: '127.0.0.1', PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const written = new EventEmitter()
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (chunk: Buffer) => { output += chunk.toString(); written.emit('data') })
  }
  child.once('exit', () => { written.emit('exit') })
  const waitFor = (pattern: RegExp, deadlineMs = 30_000) => new Promise<RegExpExecArray | null>((resolve) => {
    const check = () => {
      const match = pattern.exec(output)
      if (match === null && child.exitCode === null && child.signalCode === null) return
      done(match)
    }
    const deadline = setTimeout(() => { done(null) }, deadlineMs)
    function done (match: RegExpExecArray | null): void {
      clearTimeout(deadline)
      written.off('data', check).off('exit', check)
      resolve(match)
    }
    written.on('data', check).on('exit', check)
    check()
  })
  return { child, output: () => output, waitFor }
}

/** Starts a service and waits until it listens; the test's teardown stops it (SIGTERM to its PID). */
export async function startService (t: { teardown: (fn: () => unknown) => void }, env: Record<string, string>): Promise<ServiceProcess> {
  const { child, output, waitFor } = spawnService(env)
  t.teardown(() => stopProcess(child))
  const listening = await waitFor(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/)
  if (listening === null) throw new Error(`the service did not start (exit code ${String(child.exitCode)}): ${output()}`)
  return { child, output, base: listening[1] }
}

export async function stopProcess (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  await exited
}
