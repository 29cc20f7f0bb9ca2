import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'

export const REDIS_SERVER = process.env.REDIS_SERVER_PATH ?? '/usr/bin/redis-server'

export async function freePort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as { port: number }).port
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * A real redis-server of the test's own: a free port, its own temporary folder, no
 * persistence. Stopped (by the PID recorded here, never by name) when the test ends; `stop`
 * and `start` let a test take it down and bring it back on the same port.
 */
export class TestRedis {
  private child: ChildProcess | undefined
  readonly dir = mkdtempSync(join(tmpdir(), 'kernel-redis-'))

  private constructor (readonly port: number) {}

  static async start (t: { teardown: (fn: () => unknown) => void }): Promise<TestRedis> {
    const redis = new TestRedis(await freePort())
    t.teardown(async () => {
      await redis.stop()
      rmSync(redis.dir, { recursive: true, force: true })
    })
    await redis.start()
    return redis
  }

  get url (): string {
    return `redis://127.0.0.1:${this.port}`
  }

  get pid (): number | undefined {
    return this.child?.pid
  }

  async start (): Promise<void> {
    const child = spawn(REDIS_SERVER, ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--appendonly', 'no', '--enable-debug-command', 'local'], { stdio: ['ignore', 'pipe', 'pipe'] })
    this.child = child
    // ready once it says so in its log (read to the end, so that the pipe never fills)
    let output = ''
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString()
        if (output.includes('Ready to accept connections')) resolve()
      })
      child.stderr!.resume()
      child.once('exit', (code) => { reject(new Error(`redis-server exited with ${String(code)}: ${output}`)) })
    })
  }

  /** Stops this server (SIGTERM to its own PID) and waits for it to exit. */
  async stop (): Promise<void> {
    const child = this.child
    this.child = undefined
    if (child === undefined || child.exitCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    await exited
  }

  /** A client for the test's own checks. */
  client (t: { teardown: (fn: () => unknown) => void }): Redis {
    const client = new Redis(this.port, '127.0.0.1', { maxRetriesPerRequest: 1 })
    client.on('error', () => undefined)
    t.teardown(() => { client.disconnect() })
    return client
  }
}
