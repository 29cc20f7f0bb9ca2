import type { Recording } from './recording.js'
import { addRetained, newWalk, stringBytes } from './retained-size.js'
import type { SizeWalk } from './retained-size.js'
import { boundedValue } from './bounded-value.js'

/**
 * Bytes a recording holds until its profile is read, counted (the memory storage's `maxMemory`
 * bounds their sum): a fixed part, the request's headers and body, what its spans and log calls
 * keep by reference, and what each of its holders (a panel's extension: the dumps, the mails'
 * bodies and attachments, the jobs' data) keeps in the unit's state, walked (retained-size.ts:
 * strings, buffers, plain objects; a library's objects are not followed). Large values are kept
 * cut already (bounded-value.ts), so the walk is short; what a reference shares with another is
 * counted once.
 */
export function recordingSize (recording: Recording): number {
  const walk = newWalk()
  walk.bytes += 2048 + recording.retainedBytes
  const request = recording.request
  if (request !== undefined) {
    const raw = request.rawHeaders
    for (let i = 0; i < raw.length; i++) walk.bytes += raw[i]!.length
    const length = Number(request.headers['content-length'])
    if (length > 0) walk.bytes += length
  }
  for (const span of recording.spans.spans) {
    walk.bytes += 256 + stringBytes(span.name)
    ownValues(walk, span.data)
  }
  for (const call of recording.logs?.calls ?? []) {
    walk.bytes += 128
    addRetained(walk, call.args, undefined, true)
  }
  if (recording.live !== undefined) addRetained(walk, recording.live, undefined, true)
  const count = (value: unknown): void => { addRetained(walk, value, undefined, true) }
  for (const holder of recording.holders) {
    // an app's holder that fails counts nothing more: the recording is still kept
    try { holder.held?.(recording.context, count) } catch {}
  }
  return walk.bytes
}

/** A span's data: its own fields (an instrumentation's object: a statement's context, a command's arguments), each walked as plain data. */
function ownValues (walk: SizeWalk, data: object): void {
  for (const key of Object.keys(data)) {
    const descriptor = Object.getOwnPropertyDescriptor(data, key)
    if (descriptor !== undefined && 'value' in descriptor) addRetained(walk, descriptor.value, undefined, true)
  }
}

/**
 * Makes a recording that holds too much for its storage smaller, in place, each cut marked
 * where its panel shows it (bounded-value.ts): the log calls' arguments, and what each holder
 * keeps (the queue panel: the jobs' data and options; the mail panel: the mails' data). Returns
 * the recording's size afterwards.
 */
export function shrinkRecording (recording: Recording): number {
  const before = recordingSize(recording)
  for (const call of recording.logs?.calls ?? []) call.args = boundedValue(call.args).value as unknown[]
  for (const holder of recording.holders) {
    try { holder.shrink?.(recording.context) } catch {}
  }
  const after = recordingSize(recording)
  recording.cut = `This unit held ${megabytes(before)}, more than a quarter of the memory storage's maxMemory: its large values (job data, mail bodies and attachments, log fields) were cut (marked "cut by the profiler") to ${megabytes(after)}.`
  return after
}

function megabytes (bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`
}
