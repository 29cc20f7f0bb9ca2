import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { Redis } from 'ioredis'
import { freePort, TestServer } from '../servers/test-server.js'

export { freePort }
export const REDIS_SERVER = process.env.REDIS_SERVER_PATH ?? '/usr/bin/redis-server'

/** A real redis-server of the test's own (Debian's `redis-server`), no persistence. */
export class TestRedis extends TestServer {
  protected readonly ready = { text: 'Ready to accept connections', on: 'stdout' as const }

  static async start (t: { teardown: (fn: () => unknown) => void }): Promise<TestRedis> {
    return await TestServer.started(t, new TestRedis(await freePort(), 'kernel-redis-'))
  }

  get url (): string {
    return `redis://127.0.0.1:${this.port}`
  }

  protected launch (): ChildProcess {
    return spawn(REDIS_SERVER, ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--appendonly', 'no', '--enable-debug-command', 'local'], { stdio: ['ignore', 'pipe', 'pipe'] })
  }

  /** A client for the test's own checks. */
  client (t: { teardown: (fn: () => unknown) => void }): Redis {
    const client = new Redis(this.port, '127.0.0.1', { maxRetriesPerRequest: 1 })
    client.on('error', () => undefined)
    t.teardown(() => { client.disconnect() })
    return client
  }
}
