import type { Test } from 'tap'
import { existsSync } from 'node:fs'

/** Debian's chromium (.ci/run installs it); CHROMIUM_PATH points elsewhere. Never a downloaded browser. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

/**
 * Whether the browser tests can run: without chromium they are skipped, except in CI, which
 * installs it (.ci/run), where a missing browser is a failure.
 */
export function chromiumAvailable (t: Test): boolean {
  if (existsSync(CHROMIUM)) return true
  if (process.env.CI !== undefined) t.fail(`${CHROMIUM} is missing: the browser test cannot run in CI`)
  else t.skip(`${CHROMIUM} is not installed (apt-get install chromium): browser test skipped`)
  return false
}
