import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'

export const root = resolve(import.meta.dirname, '..')

const SOURCES = ['src', 'plugins', 'cli', 'service/src']
const STAMP = join(root, 'dist', '.built')

function newestSource (dir: string): number {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs)
  }
  return newest
}

function upToDate (): boolean {
  if (!existsSync(STAMP)) return false
  const built = statSync(STAMP).mtimeMs
  return SOURCES.every((dir) => newestSource(join(root, dir)) <= built)
}

/**
 * Builds `dist/` (and the service's) for the tests that run the compiled output or import the
 * plugin by its package name, unless it is newer than every source. Test files run in
 * parallel: an atomic mkdir serialises the builds so no test reads a half-written dist.
 */
export function buildOnce (): void {
  if (upToDate()) return
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
    if (upToDate()) return
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'ignore' })
    mkdirSync(join(root, 'dist'), { recursive: true })
    execFileSync('touch', [STAMP])
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}
