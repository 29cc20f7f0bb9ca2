import type { ProfileSummary } from '../profile.js'
import { isSummary } from '../profile-shape.js'

/**
 * The file storage's records: one line of JSON each, `{"s":<summary>,"p":<profile>}` and a
 * newline, appended to segment files (`segments/<slot>-<n>.jsonl`, each written by one
 * process). The summary comes first, so that the index is built from the segments by parsing
 * summaries only; a profile is read back by the byte offset and length of its `"p"` value. JSON
 * never holds a raw newline, so a line is a record: what follows the last newline of a segment
 * is a record torn by a crash (or being written now, seen by another process) and is skipped,
 * as is any line that is not a record.
 */
const OPEN = '{"s":'
const SEPARATOR = ',"p":'
const CLOSE = '}\n'
const NEWLINE = 0x0a
const CLOSE_BRACE = 0x7d
const SEPARATOR_BYTES = Buffer.from(SEPARATOR)

/** Bytes a record takes at most: every UTF-16 code unit of its JSON as 3 bytes of UTF-8. */
export function recordBound (summaryJson: string, profileJson: string): number {
  return (summaryJson.length + profileJson.length) * 3 + OPEN.length + SEPARATOR.length + CLOSE.length
}

/**
 * Writes a record into `buffer` at `at` (room for `recordBound` bytes); gives where its profile
 * starts and ends and where the record ends, in bytes from `at`'s origin.
 */
export function writeRecord (buffer: Buffer, at: number, summaryJson: string, profileJson: string): { start: number, end: number, next: number } {
  at += buffer.write(OPEN, at, 'latin1')
  at += buffer.write(summaryJson, at)
  at += buffer.write(SEPARATOR, at, 'latin1')
  const start = at
  at += buffer.write(profileJson, at)
  const end = at
  at += buffer.write(CLOSE, at, 'latin1')
  return { start, end, next: at }
}

/** A record found in a segment: its summary, and where its profile's JSON lies (bytes, in the segment). */
export interface SegmentRecord {
  summary: ProfileSummary
  offset: number
  length: number
}

/**
 * The records of `bytes`, the part of a segment that starts at `origin` (a line's start): every
 * whole line that is a record, in order, and `end`, where the next whole line will start (after
 * the last newline). `skipped`: lines that were no record (torn, corrupt, of another shape).
 */
export function parseRecords (bytes: Buffer, origin: number, now: number): { records: SegmentRecord[], end: number, skipped: number } {
  const records: SegmentRecord[] = []
  let skipped = 0
  let line = 0
  for (;;) {
    const newline = bytes.indexOf(NEWLINE, line)
    if (newline < 0) break
    const record = parseLine(bytes, line, newline, now)
    if (record === undefined) skipped++
    else records.push({ summary: record.summary, offset: origin + record.start, length: record.end - record.start })
    line = newline + 1
  }
  return { records, end: origin + line, skipped }
}

function parseLine (bytes: Buffer, line: number, newline: number, now: number): { summary: ProfileSummary, start: number, end: number } | undefined {
  if (newline - line < OPEN.length + SEPARATOR.length + 2 || bytes.toString('latin1', line, line + OPEN.length) !== OPEN || bytes[newline - 1] !== CLOSE_BRACE) return undefined
  // a summary is JSON: its strings hold no raw `,"p":` (their quotes are escaped), so the first one ends it
  const separator = bytes.indexOf(SEPARATOR_BYTES, line + OPEN.length)
  if (separator < 0 || separator > newline) return undefined
  let summary: unknown
  try {
    summary = JSON.parse(bytes.toString('utf8', line + OPEN.length, separator))
  } catch {
    return undefined
  }
  if (!isSummary(summary, now)) return undefined
  return { summary, start: separator + SEPARATOR.length, end: newline - 1 }
}

/**
 * A segment file's name: `<slot>-<n>.jsonl`, written by the process holding the writer slot
 * `<slot>` (two hex characters, its tokens' first two: writer-slots.ts), `n` counting that
 * slot's segments; or `<n>.jsonl`, a segment of the single-writer layout before slots.
 */
export interface SegmentName {
  name: string
  /** undefined for a segment of the single-writer layout */
  slot: string | undefined
  n: number
}

const SEGMENT_NAME = /^(?:([0-9a-f]{2})-)?([1-9][0-9]{0,14})\.jsonl$/

/** A segment's name parsed; undefined for any other file name. */
export function parseSegmentName (name: string): SegmentName | undefined {
  const match = SEGMENT_NAME.exec(name)
  return match === null ? undefined : { name, slot: match[1], n: Number(match[2]) }
}

export function segmentName (slot: string, n: number): string {
  return `${slot}-${n}.jsonl`
}
