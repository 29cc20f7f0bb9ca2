import { open, readdir, stat } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import type { SegmentName, SegmentRecord } from './segment-format.js'
import { parseRecords, parseSegmentName } from './segment-format.js'

/** The folder of a profiler folder that holds the segments. */
export const SEGMENTS = 'segments'

export function segmentPath (directory: string, name: string): string {
  return join(directory, SEGMENTS, name)
}

export const missing = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === 'ENOENT'

/** What a segment gained since the last scan. */
export interface SegmentChange {
  segment: SegmentName
  /** the records appended since the last scan, in order of writing */
  records: SegmentRecord[]
  /** the file was replaced or made shorter: what was read of it before no longer counts, `records` are all of it */
  reset: boolean
  /** lines since the last scan that were no record (torn by a crash, corrupt) */
  skipped: number
}

/** What a scan found changed: segments that gained records (or were replaced), and those deleted since. */
export interface ScanChanges {
  changed: SegmentChange[]
  gone: string[]
  /** segments with bytes after their last whole line (from `end` on): a record being written, or torn by a crash */
  torn: Array<{ segment: SegmentName, end: number }>
}

/** A segment as read so far. */
interface Seen {
  /** bytes read, up to the last whole line */
  end: number
  ino: number
  size: number
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
 * The segments of a folder, every process's, read again at each `read()`: only what a segment
 * gained since the last call is read and parsed (its size and inode are looked at first; a
 * segment replaced under the same name, or made shorter, is read anew). A line not whole yet
 * (its writer is writing it, or was killed while writing it) is not read until it is whole.
 */
export class SegmentScan {
  private readonly seen = new Map<string, Seen>()

  constructor (private readonly directory: string) {}

  /**
   * Every segment changed since the last call, in order of name (a slot's in the order of its
   * numbers), and those gone; `skip`: segments not to read (the caller's own, which it knows).
   */
  async read (now: number, skip: (name: string) => boolean = () => false): Promise<ScanChanges> {
    let names: string[]
    try {
      names = await readdir(join(this.directory, SEGMENTS))
    } catch (error) {
      if (!missing(error)) throw error
      names = []
    }
    const segments = names.map(parseSegmentName).filter((segment): segment is SegmentName => segment !== undefined && !skip(segment.name))
    segments.sort((a, b) => (a.slot ?? '').localeCompare(b.slot ?? '') || a.n - b.n)
    const present = new Set(segments.map((segment) => segment.name))
    const gone: string[] = []
    for (const name of this.seen.keys()) {
      if (!present.has(name)) {
        this.seen.delete(name)
        gone.push(name)
      }
    }
    const changed: SegmentChange[] = []
    const torn: ScanChanges['torn'] = []
    for (const segment of segments) {
      const change = await this.update(segment, now)
      if (change === undefined) {
        // deleted between the listing and the read
        if (this.seen.delete(segment.name)) gone.push(segment.name)
        continue
      }
      if (change.records.length > 0 || change.reset || change.skipped > 0) changed.push(change)
      const seen = this.seen.get(segment.name)!
      if (seen.size > seen.end) torn.push({ segment, end: seen.end })
    }
    return { changed, gone, torn }
  }

  /** Forgets what was read: the next `read()` reads every segment anew. */
  reset (): void {
    this.seen.clear()
  }

  /** A segment's new lines; undefined when it is gone. */
  private async update (segment: SegmentName, now: number): Promise<SegmentChange | undefined> {
    const path = segmentPath(this.directory, segment.name)
    const known = this.seen.get(segment.name)
    if (known !== undefined) {
      // unchanged since the last read (a stat, no open): the common case of a folder at rest
      try {
        const { size, ino } = await stat(path)
        if (ino === known.ino && size === known.size) return { segment, records: [], reset: false, skipped: 0 }
      } catch (error) {
        if (missing(error)) return undefined
        throw error
      }
    }
    let handle: FileHandle
    try {
      handle = await open(path, 'r')
    } catch (error) {
      if (missing(error)) return undefined
      throw error
    }
    try {
      const { size, ino } = await handle.stat()
      const reset = known !== undefined && (known.ino !== ino || size < known.end)
      const from = known === undefined || reset ? 0 : known.end
      const change: SegmentChange = { segment, records: [], reset, skipped: 0 }
      let end = from
      if (size > from) {
        const bytes = Buffer.allocUnsafe(size - from)
        const read = await readFully(handle, bytes, bytes.length, from)
        const parsed = parseRecords(bytes.subarray(0, read), from, now)
        change.records = parsed.records
        change.skipped = parsed.skipped
        end = parsed.end
      }
      this.seen.set(segment.name, { end, ino, size })
      return change
    } finally {
      await handle.close()
    }
  }
}

/** A segment's record's profile JSON; undefined when the segment is gone (its profiles left the bounds, or it was deleted). */
export async function readRecord (directory: string, segment: string, offset: number, length: number): Promise<string | undefined> {
  let handle: FileHandle
  try {
    handle = await open(segmentPath(directory, segment), 'r')
  } catch (error) {
    if (missing(error)) return undefined
    throw error
  }
  try {
    const bytes = Buffer.allocUnsafe(length)
    const read = await readFully(handle, bytes, length, offset)
    return bytes.toString('utf8', 0, read)
  } finally {
    await handle.close()
  }
}
