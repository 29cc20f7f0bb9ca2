import { execFileSync, spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../redis/server.js'

export const MARIADBD = process.env.MARIADBD_PATH ?? '/usr/sbin/mariadbd'
export const MARIADB_INSTALL_DB = process.env.MARIADB_INSTALL_DB_PATH ?? '/usr/bin/mariadb-install-db'

/**
 * A real MariaDB server of the test's own (Debian's `mariadb-server` package): a datadir made by
 * `mariadb-install-db` in a temporary folder, `mariadbd` on a free port of 127.0.0.1 (as root,
 * `--user=root`), its socket in that folder, nothing written to disk that it can avoid. The
 * `root` user logs in without a password over TCP; a `test` database is made. Stopped by the PID
 * recorded here (SIGTERM, a clean shutdown) when the test ends, and its folder removed.
 */
export class TestMariaDb {
  private child: ChildProcess | undefined
  readonly dir = mkdtempSync(join(tmpdir(), 'kernel-mariadb-'))
  readonly user = 'root'
  readonly database = 'test'

  private constructor (readonly port: number) {}

  static async start (t: { teardown: (fn: () => unknown) => void }): Promise<TestMariaDb> {
    const server = new TestMariaDb(await freePort())
    t.teardown(async () => {
      await server.stop()
      rmSync(server.dir, { recursive: true, force: true })
    })
    await server.start()
    return server
  }

  /** mysql2's options for it */
  get connection (): { host: string, port: number, user: string, database: string } {
    return { host: '127.0.0.1', port: this.port, user: this.user, database: this.database }
  }

  get pid (): number | undefined {
    return this.child?.pid
  }

  private async start (): Promise<void> {
    const data = join(this.dir, 'data')
    const user = process.getuid?.() === 0 ? ['--user=root'] : []
    // root logs in without a password (not by the unix socket's peer check), so that a TCP client can
    execFileSync(MARIADB_INSTALL_DB, ['--no-defaults', `--datadir=${data}`, '--auth-root-authentication-method=normal', '--skip-test-db', ...user], { stdio: 'ignore' })
    const child = spawn(MARIADBD, [
      '--no-defaults', `--datadir=${data}`, `--port=${this.port}`, '--bind-address=127.0.0.1',
      `--socket=${join(this.dir, 'mariadb.sock')}`, `--pid-file=${join(this.dir, 'mariadb.pid')}`,
      '--skip-log-bin', '--innodb-flush-log-at-trx-commit=0', '--innodb-buffer-pool-size=16M', '--skip-name-resolve',
      `--init-file=${this.initFile()}`, ...user
    ], { stdio: ['ignore', 'ignore', 'pipe'] })
    this.child = child
    // ready once it says so in its log (read to the end, so that the pipe never fills)
    let output = ''
    let ready = false
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        if (ready) return
        output += chunk.toString()
        ready = output.includes('ready for connections')
        if (ready) resolve()
      })
      child.once('exit', (code) => { reject(new Error(`mariadbd exited with ${String(code)}: ${output}`)) })
    })
  }

  /** Run by the server before it accepts connections: the test's database. */
  private initFile (): string {
    const file = join(this.dir, 'init.sql')
    writeFileSync(file, `CREATE DATABASE IF NOT EXISTS ${this.database};\n`)
    return file
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
}
