import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { errorCodes } from './codes.js'

/**
 * The package's root folder, found by walking up from this file: the same answer from the
 * TypeScript sources (tests) and from the compiled `dist/` (installed package). The error pages
 * fold the kernel's own stack frames under it, as Symfony's under `vendor/`; its templates and
 * version are found from it (`config/paths.ts`).
 */
function findPackageRoot (): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'fastify-kernel') return dir
    const parent = dirname(dir)
    if (parent === dir) throw new errorCodes.KERNEL_PACKAGE_NOT_FOUND()
    dir = parent
  }
}

export const packageRoot = findPackageRoot()
