/**
 * Running the docs' commands for real: the example service as `npm start` starts it, and each
 * command under bash in the repository's root.
 */
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { root } from '../build-once.js'

/**
 * What a docs command sees of the environment: no setting of the developer's (APP_ENV, a
 * PORT…) leaks into the embedded defaults the docs describe.
 */
function cleanEnv (extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { npm_config_update_notifier: 'false', ...extra }
  for (const name of ['PATH', 'HOME', 'TMPDIR']) if (process.env[name] !== undefined) env[name] = process.env[name]
  return env
}

/**
 * A free port of four digits, as the docs' 8000: a response that carries its own URL keeps the
 * `Content-Length` the docs show.
 */
export async function freeFourDigitPort (): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 8001 + Math.floor(Math.random() * 1999)
    const server = createServer()
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => { resolve(false) })
      server.listen(port, '127.0.0.1', () => { resolve(true) })
    })
    if (free) {
      await new Promise((resolve) => server.close(resolve))
      return port
    }
  }
  throw new Error('no free port between 8001 and 9999')
}

/** Stops a process group this module started (`detached`), by its leader's PID. */
async function stopGroup (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  try {
    process.kill(-child.pid!, 'SIGTERM')
  } catch {
    return
  }
  await exited
}

export interface DocsService {
  port: number
  /** everything the service printed */
  output: () => string
  stop: () => Promise<void>
}

/**
 * The example service started with `npm start` (its build step, then service/dist/main.js), on
 * its embedded defaults but for two settings: `PORT`, a free port, and `PROFILER_DIR`, a
 * temporary folder (the docs' runs leave no profiles in a developer's own var/profiler).
 */
export async function startDocsService (): Promise<DocsService> {
  const port = await freeFourDigitPort()
  const profiles = mkdtempSync(join(tmpdir(), 'kernel-docs-profiles-'))
  // its own process group: npm runs the service under a shell, and the whole group is stopped
  const child = spawn('npm', ['start'], { cwd: root, env: cleanEnv({ PORT: String(port), PROFILER_DIR: profiles }), stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let output = ''
  const listening = new Promise<boolean>((resolve) => {
    const read = (chunk: Buffer): void => {
      output += chunk.toString()
      if (output.includes(`Server listening at http://127.0.0.1:${port}`)) resolve(true)
    }
    child.stdout!.on('data', read)
    child.stderr!.on('data', read)
    child.once('exit', () => { resolve(false) })
  })
  const stop = async (): Promise<void> => {
    await stopGroup(child)
    rmSync(profiles, { recursive: true, force: true })
  }
  if (!await listening) {
    await stop()
    throw new Error(`npm start did not start the service:\n${output}`)
  }
  return { port, output: () => output, stop }
}

/** A command's output, stdout and stderr together as a terminal shows them. */
export async function runCommand (command: string, timeoutMs = 60_000): Promise<{ output: string, status: number | null }> {
  const child = spawn('bash', ['-c', `exec 2>&1\n${command}`], { cwd: root, env: cleanEnv(), stdio: ['ignore', 'pipe', 'inherit'], detached: true })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const timer = setTimeout(() => { stopGroup(child).catch(() => {}) }, timeoutMs)
  // 'close': the output is all read
  const [status] = await once(child, 'close') as [number | null]
  clearTimeout(timer)
  return { output, status }
}
