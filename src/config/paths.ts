import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { errorCodes } from '../errors/codes.js'

/**
 * The package's root folder, found by walking up from this file: the same answer from the
 * TypeScript sources (tests) and from the compiled `dist/` (installed package).
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
/** The kernel's version, as the web debug toolbar shows it. */
export const packageVersion = (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version
export const templatesDir = join(packageRoot, 'templates')
