import { isAbsolute, join, relative, sep } from 'node:path'
import { packageRoot } from './kernel-files.js'
import { originalPosition } from './source-map.js'
import { parseStack } from './flatten.js'

/** The kernel's own code: a route it is told about is never declared there. */
const KERNEL_FOLDERS = ['src', 'plugins', 'cli', 'dist', 'index.ts', 'index.js'].map((name) => join(packageRoot, name))

function isLibraryFile (file: string): boolean {
  return file.startsWith('node:') || file.includes(`${sep}node_modules${sep}`) || !isAbsolute(file) ||
    KERNEL_FOLDERS.some((folder) => file === folder || file.startsWith(folder + sep))
}

/**
 * Where a route was declared, from a stack captured as it was added (the kernel's `onRoute`
 * hook, which Fastify runs inside `app.get()` itself, as fastify-overview records route sources):
 * the first frame outside Node, the dependencies and the kernel, mapped to its TypeScript source
 * through its source map, relative to `root` (`routes/users.ts:12`). Undefined when the stack
 * has no such frame.
 */
export function siteOfStack (stack: string | undefined, root = process.cwd()): string | undefined {
  for (const frame of parseStack(stack)) {
    if (isLibraryFile(frame.file)) continue
    const original = originalPosition(frame.file, frame.line, frame.column)
    const source = original?.file ?? frame.file
    const shown = relative(root, source)
    return `${shown.startsWith('..') || isAbsolute(shown) ? source : shown.split(sep).join('/')}:${original?.line ?? frame.line}`
  }
  return undefined
}
