import { execFileSync, spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { chownSync } from 'node:fs'
import { join } from 'node:path'
import { freePort, TestServer } from '../servers/test-server.js'

export const POSTGRES_BIN = process.env.POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin'

/** PostgreSQL refuses to run as root: as root, it runs as Debian's `postgres` user. */
function serverUser (): { uid: number, gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
  return { uid: id('-u'), gid: id('-g') }
}

/**
 * A real PostgreSQL server of the test's own (Debian's `postgresql` package): `initdb` in its
 * folder, `postgres` with its socket there, trust authentication for the `postgres` user, no
 * fsync; stopped by SIGINT, PostgreSQL's fast shutdown.
 */
export class TestPostgres extends TestServer {
  readonly user = 'postgres'
  readonly database = 'postgres'
  protected readonly ready = { text: 'database system is ready to accept connections', on: 'stderr' as const }
  protected override readonly stopSignal = 'SIGINT'

  static async start (t: { teardown: (fn: () => unknown) => void }): Promise<TestPostgres> {
    return await TestServer.started(t, new TestPostgres(await freePort(), 'kernel-postgres-'))
  }

  get url (): string {
    return `postgres://${this.user}@127.0.0.1:${this.port}/${this.database}`
  }

  protected launch (): ChildProcess {
    const as = serverUser()
    if (as !== undefined) chownSync(this.dir, as.uid, as.gid)
    const data = join(this.dir, 'data')
    execFileSync(join(POSTGRES_BIN, 'initdb'), ['-D', data, '-U', this.user, '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'], { stdio: 'ignore', ...as })
    return spawn(join(POSTGRES_BIN, 'postgres'), [
      '-D', data, '-p', String(this.port), '-k', this.dir,
      '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'synchronous_commit=off'
    ], { stdio: ['ignore', 'ignore', 'pipe'], ...as })
  }
}
