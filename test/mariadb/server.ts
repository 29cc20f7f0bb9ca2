import { execFileSync, spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort, TestServer } from '../servers/test-server.js'

export const MARIADBD = process.env.MARIADBD_PATH ?? '/usr/sbin/mariadbd'
export const MARIADB_INSTALL_DB = process.env.MARIADB_INSTALL_DB_PATH ?? '/usr/bin/mariadb-install-db'

/**
 * A real MariaDB server of the test's own (Debian's `mariadb-server` package): a datadir made by
 * `mariadb-install-db` in its folder, `mariadbd` (as root, `--user=root`) with its socket there,
 * nothing written to disk that it can avoid. The `root` user logs in without a password over TCP;
 * a `test` database is made.
 */
export class TestMariaDb extends TestServer {
  readonly user = 'root'
  readonly database = 'test'
  protected readonly ready = { text: 'ready for connections', on: 'stderr' as const }

  static async start (t: { teardown: (fn: () => unknown) => void }): Promise<TestMariaDb> {
    return await TestServer.started(t, new TestMariaDb(await freePort(), 'kernel-mariadb-'))
  }

  /** mysql2's options for it */
  get connection (): { host: string, port: number, user: string, database: string } {
    return { host: '127.0.0.1', port: this.port, user: this.user, database: this.database }
  }

  protected launch (): ChildProcess {
    const data = join(this.dir, 'data')
    const user = process.getuid?.() === 0 ? ['--user=root'] : []
    // root logs in without a password (not by the unix socket's peer check), so that a TCP client can
    execFileSync(MARIADB_INSTALL_DB, ['--no-defaults', `--datadir=${data}`, '--auth-root-authentication-method=normal', '--skip-test-db', ...user], { stdio: 'ignore' })
    return spawn(MARIADBD, [
      '--no-defaults', `--datadir=${data}`, `--port=${this.port}`, '--bind-address=127.0.0.1',
      `--socket=${join(this.dir, 'mariadb.sock')}`, `--pid-file=${join(this.dir, 'mariadb.pid')}`,
      '--skip-log-bin', '--innodb-flush-log-at-trx-commit=0', '--innodb-buffer-pool-size=16M', '--skip-name-resolve',
      `--init-file=${this.initFile()}`, ...user
    ], { stdio: ['ignore', 'ignore', 'pipe'] })
  }

  /** Run by the server before it accepts connections: the test's database. */
  private initFile (): string {
    const file = join(this.dir, 'init.sql')
    writeFileSync(file, `CREATE DATABASE IF NOT EXISTS ${this.database};\n`)
    return file
  }
}
