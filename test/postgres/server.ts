import { execFileSync, spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { chownSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../redis/server.js'

export const POSTGRES_BIN = process.env.POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin'

/** PostgreSQL refuses to run as root: as root, it runs as Debian's `postgres` user. */
function serverUser (): { uid: number, gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
  return { uid: id('-u'), gid: id('-g') }
}

/**
 * A real PostgreSQL server of the test's own (Debian's `postgresql` package): `initdb` in a
 * temporary folder, `postgres` on a free port of 127.0.0.1 with its socket in that folder, trust
 * authentication for the `postgres` user, no fsync. Stopped by the PID recorded here (a fast
 * shutdown, SIGINT) when the test ends, and its folder removed.
 */
export class TestPostgres {
  private child: ChildProcess | undefined
  readonly dir = mkdtempSync(join(tmpdir(), 'kernel-postgres-'))
  readonly user = 'postgres'
  readonly database = 'postgres'

  private constructor (readonly port: number) {}

  static async start (t: { teardown: (fn: () => unknown) => void }): Promise<TestPostgres> {
    const server = new TestPostgres(await freePort())
    t.teardown(async () => {
      await server.stop()
      rmSync(server.dir, { recursive: true, force: true })
    })
    await server.start()
    return server
  }

  get url (): string {
    return `postgres://${this.user}@127.0.0.1:${this.port}/${this.database}`
  }

  get pid (): number | undefined {
    return this.child?.pid
  }

  private async start (): Promise<void> {
    const as = serverUser()
    if (as !== undefined) chownSync(this.dir, as.uid, as.gid)
    const data = join(this.dir, 'data')
    execFileSync(join(POSTGRES_BIN, 'initdb'), ['-D', data, '-U', this.user, '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'], { stdio: 'ignore', ...as })
    const child = spawn(join(POSTGRES_BIN, 'postgres'), [
      '-D', data, '-p', String(this.port), '-k', this.dir,
      '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'synchronous_commit=off'
    ], { stdio: ['ignore', 'ignore', 'pipe'], ...as })
    this.child = child
    // ready once it says so in its log (read to the end, so that the pipe never fills)
    let output = ''
    let ready = false
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        if (ready) return
        output += chunk.toString()
        ready = output.includes('database system is ready to accept connections')
        if (ready) resolve()
      })
      child.once('exit', (code) => { reject(new Error(`postgres exited with ${String(code)}: ${output}`)) })
    })
  }

  /** Stops this server (SIGINT, PostgreSQL's fast shutdown, to its own PID) and waits for it to exit. */
  async stop (): Promise<void> {
    const child = this.child
    this.child = undefined
    if (child === undefined || child.exitCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGINT')
    await exited
  }
}
