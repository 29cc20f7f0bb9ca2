import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, statSync } from 'node:fs'
import { resolve } from 'node:path'

export const root = resolve(import.meta.dirname, '..')

/**
 * Builds `dist/` for the tests that run the compiled output. Test files run in parallel:
 * an atomic mkdir serialises the builds so no test reads a half-written dist.
 */
export function buildOnce (): void {
  const lock = resolve(root, '.tap-build.lock')
  for (;;) {
    try {
      mkdirSync(lock)
      break
    } catch {
      // a lock left by a crashed run is taken over after a minute
      try { if (Date.now() - statSync(lock).mtimeMs > 60_000) rmSync(lock, { recursive: true, force: true }) } catch {}
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100)
    }
  }
  try {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'ignore' })
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}
