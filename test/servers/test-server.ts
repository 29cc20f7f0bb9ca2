import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export async function freePort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as { port: number }).port
  await new Promise((resolve) => server.close(resolve))
  return port
}

type Teardown = { teardown: (fn: () => unknown) => void }

/**
 * A real server of the test's own, from Debian's packages (redis-server, mariadbd, postgres): a
 * free port of 127.0.0.1, its own temporary folder, started by `launch()` and ready once its
 * log says so; stopped by the PID recorded here (never by name) when the test ends, and its
 * folder removed. `stop` and `start` let a test take it down and bring it back on the same port.
 */
export abstract class TestServer {
  private child: ChildProcess | undefined
  readonly dir: string

  constructor (readonly port: number, folderPrefix: string) {
    this.dir = mkdtempSync(join(tmpdir(), folderPrefix))
  }

  /** Starts a server and stops it, and removes its folder, at the test's end. */
  static async started<S extends TestServer> (t: Teardown, server: S): Promise<S> {
    t.teardown(async () => {
      await server.stop()
      rmSync(server.dir, { recursive: true, force: true })
    })
    await server.start()
    return server
  }

  get pid (): number | undefined {
    return this.child?.pid
  }

  /** Spawns the server, with the stream its readiness is told on piped. */
  protected abstract launch (): ChildProcess
  /** What its log says once it accepts connections, and on which stream. */
  protected abstract readonly ready: { text: string, on: 'stdout' | 'stderr' }
  /** The signal of a clean, quick shutdown. */
  protected readonly stopSignal: NodeJS.Signals = 'SIGTERM'

  async start (): Promise<void> {
    const child = this.launch()
    this.child = child
    // ready once it says so in its log (read to the end, so that the pipe never fills)
    let output = ''
    let ready = false
    await new Promise<void>((resolve, reject) => {
      child[this.ready.on]!.on('data', (chunk: Buffer) => {
        if (ready) return
        output += chunk.toString()
        ready = output.includes(this.ready.text)
        if (ready) resolve()
      })
      const other = this.ready.on === 'stdout' ? child.stderr : child.stdout
      other?.resume()
      child.once('exit', (code) => { reject(new Error(`${child.spawnfile} exited with ${String(code)}: ${output}`)) })
    })
  }

  /** Stops this server (its stop signal to its own PID) and waits for it to exit. */
  async stop (): Promise<void> {
    const child = this.child
    this.child = undefined
    if (child === undefined || child.exitCode !== null) return
    const exited = once(child, 'exit')
    child.kill(this.stopSignal)
    await exited
  }
}
