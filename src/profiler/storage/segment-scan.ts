import { open, readdir } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import type { ProfileSummary } from '../profile.js'
import type { SegmentRecord } from './segment-format.js'
import { parseRecords, segmentName, segmentNumber } from './segment-format.js'

/** The folder of a profiler folder that holds the segments. */
export const SEGMENTS = 'segments'

/** Where a kept profile is: a segment's number and its bytes there, or `LEGACY`: a file of the previous layout. */
export interface Location {
  summary: ProfileSummary
  segment: number
  offset: number
  length: number
}
export const LEGACY = 0

export function segmentPath (directory: string, n: number): string {
  return join(directory, SEGMENTS, segmentName(n))
}

const missing = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === 'ENOENT'

/** A segment as read so far: its records, and where the next whole line starts. */
export interface ScannedSegment {
  n: number
  records: SegmentRecord[]
  /** bytes read, up to the last whole line: a torn or unfinished record after it is not counted */
  end: number
  /** lines that were no record (torn or corrupt) */
  skipped: number
  /** bytes follow the last whole line: a record being written, or torn by a crash */
  torn: boolean
  ino: number
}

/** Reads `length` bytes at `position`, as many calls as it takes. */
export async function readFully (handle: FileHandle, buffer: Buffer, length: number, position: number): Promise<number> {
  let read = 0
  while (read < length) {
    const { bytesRead } = await handle.read(buffer, read, length - read, position + read)
    if (bytesRead === 0) break
    read += bytesRead
  }
  return read
}

/**
 * The segments of a folder, read again at each `read()`: only the bytes appended to a segment
 * since the last call are read and parsed (a segment replaced under the same name, or made
 * shorter, is read anew). The writer reads a folder once, at its start; the console's reader
 * at each of its calls, while the server appends.
 */
export class SegmentScan {
  private readonly seen = new Map<number, ScannedSegment>()

  constructor (private readonly directory: string) {}

  /** Every segment in order of its number, with its records in order of writing; none when the folder has no segments. */
  async read (now: number): Promise<ScannedSegment[]> {
    let names: string[]
    try {
      names = await readdir(join(this.directory, SEGMENTS))
    } catch (error) {
      if (!missing(error)) throw error
      this.seen.clear()
      return []
    }
    const numbers = names.map(segmentNumber).filter((n): n is number => n !== undefined).sort((a, b) => a - b)
    const present = new Set(numbers)
    for (const n of this.seen.keys()) if (!present.has(n)) this.seen.delete(n)
    const segments: ScannedSegment[] = []
    for (const n of numbers) {
      const segment = await this.update(n, now)
      if (segment !== undefined) segments.push(segment)
    }
    return segments
  }

  private async update (n: number, now: number): Promise<ScannedSegment | undefined> {
    let handle: FileHandle
    try {
      handle = await open(segmentPath(this.directory, n), 'r')
    } catch (error) {
      // deleted by the writer meanwhile (its profiles left the bounds)
      if (!missing(error)) throw error
      this.seen.delete(n)
      return undefined
    }
    try {
      const { size, ino } = await handle.stat()
      let segment = this.seen.get(n)
      if (segment === undefined || segment.ino !== ino || size < segment.end) segment = { n, records: [], end: 0, skipped: 0, torn: false, ino }
      if (size > segment.end) {
        const bytes = Buffer.allocUnsafe(size - segment.end)
        const read = await readFully(handle, bytes, bytes.length, segment.end)
        const parsed = parseRecords(bytes.subarray(0, read), segment.end, now)
        for (const record of parsed.records) segment.records.push(record)
        segment.end = parsed.end
        segment.skipped += parsed.skipped
      }
      segment.torn = size > segment.end
      this.seen.set(n, segment)
      return segment
    } finally {
      await handle.close()
    }
  }
}

/**
 * The profiles a folder keeps, oldest first, from the previous layout's (`legacy`, older than
 * any segment's) and the segments' records in order of writing: a token's last record is its
 * profile; then those older than `maxAgeMs` (by their `time`) leave, and beyond `maxProfiles`
 * the first saved. What the writer keeps after a restart, and what the console's reader shows.
 */
export function keptProfiles (legacy: ProfileSummary[], segments: ScannedSegment[], now: number, limits: { maxProfiles: number, maxAgeMs: number }): Map<string, Location> {
  const all = new Map<string, Location>()
  for (const summary of [...legacy].sort((a, b) => a.time - b.time)) all.set(summary.token, { summary, segment: LEGACY, offset: 0, length: 0 })
  for (const segment of segments) {
    for (const record of segment.records) {
      all.delete(record.summary.token)
      all.set(record.summary.token, { ...record, segment: segment.n })
    }
  }
  const live: Array<[string, Location]> = []
  for (const entry of all) if (now - entry[1].summary.time <= limits.maxAgeMs) live.push(entry)
  return new Map(live.slice(-limits.maxProfiles))
}

/** A segment's record's profile JSON; undefined when the segment is gone (its profiles left the bounds, or it was deleted). */
export async function readRecord (directory: string, location: Location): Promise<string | undefined> {
  let handle: FileHandle
  try {
    handle = await open(segmentPath(directory, location.segment), 'r')
  } catch (error) {
    if (missing(error)) return undefined
    throw error
  }
  try {
    const bytes = Buffer.allocUnsafe(location.length)
    const read = await readFully(handle, bytes, location.length, location.offset)
    return bytes.toString('utf8', 0, read)
  } finally {
    await handle.close()
  }
}
