import { readFileSync } from 'node:fs'
import { dirname, isAbsolute, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { LRUCache } from 'lru-cache'
import { GREATEST_LOWER_BOUND, LEAST_UPPER_BOUND, TraceMap, originalPositionFor, sourceContentFor } from '@jridgewell/trace-mapping'

/** Where a position of compiled code came from: the original file, its line, and its text when the map carries it. */
export interface OriginalPosition {
  file: string
  line: number
  column: number
  /** the original source from the map's `sourcesContent`, when it has one */
  content: string | null
}

/** Compiled files larger than this are not searched for a source map (a bundle the size of a library). */
const MAX_COMPILED_BYTES = 8 * 1024 * 1024
const MAPPING_URL = /\/\/[#@]\s*sourceMappingURL=(\S+)\s*$/

/**
 * One decoded map per compiled file, kept for the life of the process: a stack frame names the
 * code that was loaded, which does not change until the process restarts, so the map read the
 * first time stays right (and a later error page costs no disk read). `null`: the file has none.
 */
const maps = new LRUCache<string, { map: TraceMap | null }>({ max: 512 })

function readMap (compiledFile: string): TraceMap | null {
  let code: string
  try {
    code = readFileSync(compiledFile, 'utf8')
  } catch {
    return null
  }
  if (code.length > MAX_COMPILED_BYTES) return null
  // the comment is the last line of the file (a trailing newline or two at most)
  const tail = code.slice(Math.max(0, code.lastIndexOf('\n', code.length - 3)))
  const url = MAPPING_URL.exec(tail)?.[1]
  if (url === undefined) return null
  try {
    if (url.startsWith('data:')) {
      const comma = url.indexOf(',')
      const payload = url.slice(comma + 1)
      const json = url.slice(0, comma).endsWith(';base64') ? Buffer.from(payload, 'base64').toString('utf8') : decodeURIComponent(payload)
      return new TraceMap(json, compiledFile)
    }
    const mapFile = url.startsWith('file://') ? fileURLToPath(url) : resolve(dirname(compiledFile), decodeURIComponent(url))
    return new TraceMap(readFileSync(mapFile, 'utf8'), mapFile)
  } catch {
    // an unreadable or malformed map: the frame stays as the stack says
    return null
  }
}

function mapOf (compiledFile: string): TraceMap | null {
  let entry = maps.get(compiledFile)
  if (entry === undefined) {
    entry = { map: readMap(compiledFile) }
    maps.set(compiledFile, entry)
  }
  return entry.map
}

/**
 * The original position of a stack frame of compiled JavaScript (`tsc`, a bundler), read from
 * its source map, or null when the file has no map (or the position is not mapped). Stack
 * frames count lines and columns from 1; source maps count columns from 0.
 *
 * Needed whatever Node's flags: without `--enable-source-maps` stacks name the compiled file;
 * with it (or under tsx) they already name the source, which then has no map and is returned
 * as null, and the caller keeps the frame as it is.
 */
export function originalPosition (file: string, line: number, column: number): OriginalPosition | null {
  if (!isAbsolute(file) || !/\.[cm]?js$/.test(file)) return null
  const map = mapOf(file)
  if (map === null) return null
  const needle = { line, column: Math.max(0, column - 1) }
  let found = originalPositionFor(map, { ...needle, bias: GREATEST_LOWER_BOUND })
  if (found.source === null) found = originalPositionFor(map, { ...needle, bias: LEAST_UPPER_BOUND })
  if (found.source === null || found.line === null) return null
  const source = found.source.startsWith('file://') ? fileURLToPath(found.source) : found.source
  return { file: source, line: found.line, column: (found.column ?? 0) + 1, content: sourceContentFor(map, found.source) }
}
