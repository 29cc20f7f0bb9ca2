import { readdir, readFile, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import type { Profile, ProfileSummary } from '../profile.js'
import { summarize } from '../profile.js'
import { isSummary, parseProfile } from '../profile-shape.js'

/**
 * The file storage's previous layout, read (never written) so that a folder an earlier version
 * wrote keeps serving its profiles until they leave the bounds: one `<token>.json` per profile
 * and `index.jsonl`, an append-only index (a summary line per save, a `{"del": token}` line per
 * purge). Temporary files of its interrupted writes are `.<token>.<pid>.<n>.tmp`.
 */
export const LEGACY_INDEX = 'index.jsonl'
const PROFILE_FILE = /^[0-9a-f]{6}\.json$/

export interface StorageLogger {
  warn: (fields: object, message: string) => void
}

const missing = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === 'ENOENT'

/** What a folder holds of the previous layout: its profiles' summaries, and its file names (to clean up). */
export interface LegacyFolder {
  /** the profiles whose file exists, the index's order (then those it does not list) */
  listed: ProfileSummary[]
  /** whether the folder has an `index.jsonl` */
  index: boolean
  /** leftovers of interrupted writes */
  temporary: string[]
  /** profile files of tokens not listed (unreadable ones) */
  unreadable: string[]
}

/**
 * Reads the previous layout: its index replayed, and every profile file the index does not list
 * read back (its line was lost to a failed append: a profile that can still be read is never
 * lost for the index's sake). Only profiles whose file exists; expiry is the caller's.
 */
export async function readLegacyFolder (directory: string, now: number, log: StorageLogger): Promise<LegacyFolder> {
  const names = await readdir(directory)
  const files = new Set(names.filter((name) => PROFILE_FILE.test(name)).map((name) => name.slice(0, 6)))
  const index = names.includes(LEGACY_INDEX)
  const temporary = names.filter((name) => name.startsWith('.') && name.endsWith('.tmp'))
  if (files.size === 0) return { listed: [], index, temporary, unreadable: [] }
  let text = ''
  try {
    text = await readFile(join(directory, LEGACY_INDEX), 'utf8')
  } catch (error) {
    if (!missing(error)) log.warn({ err: error }, 'fastify-kernel: the profiler index of the previous layout cannot be read; its profiles are read back from their files')
  }
  const byToken = new Map<string, ProfileSummary>()
  for (const line of text.split('\n')) {
    if (line === '') continue
    let record: unknown
    try { record = JSON.parse(line) } catch { continue } // a line torn by a crash or a full disk
    if (typeof (record as { del?: unknown }).del === 'string') byToken.delete((record as { del: string }).del)
    else if (isSummary(record, now)) { byToken.delete(record.token); byToken.set(record.token, record) }
  }
  const listed = [...byToken.values()].filter((summary) => files.has(summary.token))
  const unreadable: string[] = []
  for (const token of files) {
    if (byToken.has(token)) continue
    const profile = await readLegacyProfile(directory, token, now, () => undefined)
    if (profile === undefined) unreadable.push(token)
    else listed.push(summarize(profile))
  }
  return { listed, index, temporary, unreadable }
}

/** A profile file of the previous layout, parsed and checked; undefined when it is missing or not one (`problem` says why). */
export async function readLegacyProfile (directory: string, token: string, now: number, problem: (error: Error) => void): Promise<Profile | undefined> {
  let text: string
  try {
    text = await readFile(legacyFile(directory, token), 'utf8')
  } catch (error) {
    if (!missing(error)) problem(error as Error)
    return undefined
  }
  return parseProfile(text, token, problem, now)
}

export function legacyFile (directory: string, token: string): string {
  return join(directory, `${token}.json`)
}

/** Deletes a file, quietly when it is already gone; other failures are logged. */
export async function removeFile (path: string, log: StorageLogger): Promise<void> {
  try {
    await unlink(path)
  } catch (error) {
    if (!missing(error)) log.warn({ err: error, file: path }, 'fastify-kernel: cannot delete an old profiler file')
  }
}
