import type { Test } from 'tap'
import { existsSync } from 'node:fs'
import { chromium } from 'playwright-core'
import type { Browser } from 'playwright-core'

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
  else t.test('the browser tests', { skip: `${CHROMIUM} is not installed (apt-get install chromium)` }, () => {})
  return false
}

/** Debian's chromium, closed by the test's teardown; undefined (and the test failed) when it does not start. */
export async function launchChromium (t: Test): Promise<Browser | undefined> {
  try {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
    t.teardown(() => browser.close())
    return browser
  } catch (error) {
    t.fail(`chromium did not start: ${(error as Error).message}`)
    return undefined
  }
}
