import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { packageRoot } from '../errors/kernel-files.js'

/** The kernel's version, as the web debug toolbar shows it. */
export const packageVersion = (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version
export const templatesDir = join(packageRoot, 'templates')
