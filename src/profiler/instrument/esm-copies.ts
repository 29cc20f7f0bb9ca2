import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { ModuleInstrumentation } from './modules.js'
import { instrumentedCopy } from './notices.js'

/**
 * Where the app's own packages are found: its working directory and its main module's folder
 * (the same package may sit under both; it is instrumented once).
 */
export function appRoots (): string[] {
  const roots = [process.cwd()]
  const main = process.argv[1]
  if (typeof main === 'string' && main !== '') roots.push(dirname(resolve(main)))
  return [...new Set(roots)]
}

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number)
/** The conditions Node's `import` resolves a package's exports with (`module-sync` from Node 22.10). */
const CONDITIONS = new Set(['node', 'import', 'default', ...(major > 22 || (major === 22 && minor >= 10) ? ['module-sync'] : [])])

/** The folder of `name` as Node's node_modules lookup finds it from `from`, symlinks resolved. */
function packageFolder (name: string, from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name)
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate)
    if (dirname(dir) === dir) return undefined
  }
}

/** An exports target for `import`: the first condition Node knows, in the order the package lists them. */
function target (entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry
  if (Array.isArray(entry)) {
    for (const item of entry) {
      const found = target(item)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (typeof entry !== 'object' || entry === null) return undefined
  for (const [condition, value] of Object.entries(entry)) {
    if (!CONDITIONS.has(condition)) continue
    const found = target(value)
    if (found !== undefined) return found
  }
  return undefined
}

function readJson (file: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'))
    return typeof parsed === 'object' && parsed !== null ? parsed as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}

/** The file `import '<name>'` loads from the package in `folder`. */
function importedFile (folder: string): string | undefined {
  const manifest = readJson(join(folder, 'package.json'))
  if (manifest === undefined) return undefined
  const { exports } = manifest
  let entry: string | undefined
  if (exports !== undefined && exports !== null) {
    const sugar = typeof exports === 'string' || Array.isArray(exports) || Object.keys(exports).every((key) => !key.startsWith('.'))
    entry = target(sugar ? exports : (exports as Record<string, unknown>)['.'])
  } else {
    // no exports: `import` takes `main` as require does (a `module` field is for bundlers)
    entry = typeof manifest.main === 'string' ? manifest.main : 'index.js'
  }
  if (entry === undefined) return undefined
  const file = resolve(folder, entry)
  for (const candidate of [file, `${file}.js`, join(file, 'index.js')]) {
    if (existsSync(candidate) && !candidate.endsWith('/')) {
      try {
        return realpathSync(candidate)
      } catch {
        return undefined
      }
    }
  }
  return undefined
}

/** Whether Node loads `file` as an ES module: `.mjs`, or `.js` under a package.json saying `"type": "module"`. */
function isEsm (file: string): boolean {
  if (file.endsWith('.mjs')) return true
  if (!file.endsWith('.js')) return false
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const manifest = existsSync(join(dir, 'package.json')) ? readJson(join(dir, 'package.json')) : undefined
    if (manifest !== undefined) return manifest.type === 'module'
    if (dirname(dir) === dir) return false
  }
}

/**
 * The ES module copies of dual packages (nodemailer 10 ships `dist/esm` for `import` beside
 * `dist/cjs` for `require`): an app that imports such a package gets classes that are in no
 * require.cache, so `instrumentModules` never sees them. The copy the app imports is the
 * module the ESM loader cached under its resolved file URL; importing that same URL from here
 * gives the same module instance, whose classes are then instrumented. The package is looked up
 * from the app's folders (`roots`), as the app's own `import` finds it; a package whose
 * `import` entry is CommonJS is left to `instrumentModules`.
 *
 * `ready` settles once every copy found is instrumented (loading a copy the app has not imported
 * yet, so that the app's later `import` gets it instrumented); `undo` restores them all, and
 * makes a copy still loading stay untouched.
 */
export function instrumentEsmCopies (instrumentations: readonly ModuleInstrumentation[], roots: readonly string[] = appRoots()): { ready: Promise<void>, undo: () => void } {
  let active = true
  const undo: Array<() => void> = []
  const files = new Map<string, ModuleInstrumentation>()
  for (const instrumentation of instrumentations) {
    for (const root of roots) {
      const folder = packageFolder(instrumentation.name, root)
      const file = folder === undefined ? undefined : importedFile(folder)
      if (file !== undefined && isEsm(file)) files.set(file, instrumentation)
    }
  }
  const ready = Promise.all([...files].map(async ([file, instrumentation]) => {
    let namespace: unknown
    try {
      namespace = await import(pathToFileURL(file).href)
    } catch {
      // a copy that does not load: the app's own import fails the same way
      return
    }
    if (!active) return
    const copy = instrumentedCopy(instrumentation, file)
    try {
      const restore = instrumentation.instrument(namespace, copy)
      if (restore !== undefined) undo.push(restore)
    } catch (error) {
      // a copy of another shape than the one known: left alone, and said
      copy.failed(error)
    }
  })).then(() => undefined)
  return {
    ready,
    undo: () => {
      active = false
      for (const restore of undo.splice(0).reverse()) restore()
    }
  }
}
