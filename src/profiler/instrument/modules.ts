import Module, { createRequire } from 'node:module'
import { instrumentedCopy } from './notices.js'
import type { InstrumentedCopy } from './notices.js'

/**
 * A library the profiler instruments where it publishes nothing of its own: how its module is
 * recognised, the versions it is written for, and what instruments one loaded copy of it
 * (returning what undoes it).
 */
export interface ModuleInstrumentation {
  /** the package name (`pg`), as `require()` and `import` name it */
  name: string
  /** the ends of the paths of its entry files (`/pg/lib/index.js`), as the ESM loader and require.cache name them */
  files: readonly string[]
  /**
   * the versions it is written for, a semver range (`>=8.0.3 <9`): a copy of another version is
   * instrumented as far as its shape allows, and said once through the app's logger
   */
  versions: string
  /** a dual package: the ES module copy an `import` gets (in no require.cache) is instrumented too */
  esm?: boolean
  /**
   * instruments the exports of one copy; undefined when there is nothing to do (already done,
   * not that library). What the copy lacks of what it wraps is told to `copy.lacks()`, never
   * left silent
   */
  instrument: (exports: unknown, copy: InstrumentedCopy) => (() => void) | undefined
}

const require = createRequire(import.meta.url)
const loader = Module as unknown as {
  _load: (request: string, parent: unknown, isMain: boolean) => unknown
  _resolveFilename: (request: string, parent: unknown, isMain: boolean) => string
}

/** The file a `require()` of `request` from `parent` loaded (already resolved: a cached lookup), if Node says. */
function loadedFile (request: string, parent: unknown, isMain: boolean): string | undefined {
  try {
    return loader._resolveFilename(request, parent, isMain)
  } catch {
    return undefined
  }
}

function normalise (path: string): string {
  return path.includes('\\') ? path.replaceAll('\\', '/') : path
}

function matches (instrumentation: ModuleInstrumentation, request: string): boolean {
  if (request === instrumentation.name) return true
  const path = normalise(request)
  return instrumentation.files.some((file) => path.endsWith(file))
}

/**
 * Instruments the app's own copies of `instrumentations`' libraries, whatever the order of their
 * loading and this call: the copies already loaded (require.cache: a CommonJS module, which is
 * also what `import` of a CommonJS package loads) and those loaded later (CommonJS's
 * `Module._load`, through which both `require()` and the ESM loader load CommonJS). Returns what
 * undoes it all: every copy restored, the loader given back (or made inert when something
 * wrapped it since).
 */
export function instrumentModules (instrumentations: readonly ModuleInstrumentation[]): () => void {
  const undo: Array<() => void> = []
  const seen = new WeakSet<object>()
  const instrument = (instrumentation: ModuleInstrumentation, exports: unknown, file: () => string | undefined): void => {
    if ((typeof exports !== 'object' && typeof exports !== 'function') || exports === null || seen.has(exports)) return
    seen.add(exports)
    const copy = instrumentedCopy(instrumentation, file())
    try {
      const restore = instrumentation.instrument(exports, copy)
      if (restore !== undefined) undo.push(restore)
    } catch (error) {
      // a copy of another shape than the one known: left alone, and said
      copy.failed(error)
    }
  }
  for (const [file, loaded] of Object.entries(require.cache)) {
    if (loaded?.loaded !== true) continue
    const path = normalise(file)
    for (const instrumentation of instrumentations) {
      if (instrumentation.files.some((end) => path.endsWith(end))) instrument(instrumentation, loaded.exports, () => file)
    }
  }
  const original = loader._load
  let active = true
  const load = function (this: unknown, request: string, parent: unknown, isMain: boolean): unknown {
    const exports = original.call(this, request, parent, isMain)
    if (active && typeof request === 'string') {
      for (const instrumentation of instrumentations) {
        if (matches(instrumentation, request)) instrument(instrumentation, exports, () => loadedFile(request, parent, isMain))
      }
    }
    return exports
  }
  loader._load = load
  return () => {
    active = false
    if (loader._load === load) loader._load = original
    for (const restore of undo.splice(0).reverse()) restore()
  }
}
