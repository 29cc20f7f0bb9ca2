import type { Recording } from './recording.js'
import { addRetained, newWalk, stringBytes } from './retained-size.js'
import type { SizeWalk } from './retained-size.js'
import { boundedValue } from './bounded-value.js'
import type { JobLike } from './io/bullmq.js'

/**
 * Bytes a recording holds until its profile is read, counted (the memory storage's `maxMemory`
 * bounds their sum): a fixed part, the request's headers and body, and what its spans, log
 * calls, dumps, mails (their bodies and attachments) and jobs (their data) keep by reference,
 * walked (retained-size.ts: strings, buffers, plain objects; a library's objects are not
 * followed). Large values are kept cut already (bounded-value.ts), so the walk is short; what
 * a reference shares with another is counted once.
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
  const { context } = recording
  addRetained(walk, context.get('dumps')?.dumps, undefined, true)
  for (const sent of context.get('sentMails')?.messages ?? []) {
    // the raw message is counted as it is read (retainedBytes)
    addRetained(walk, sent.mail?.data, undefined, true)
  }
  for (const added of context.get('queuedJobs')?.jobs ?? []) {
    addRetained(walk, added.data, undefined, true)
    addRetained(walk, added.opts, undefined, true)
  }
  const processed = context.get('processedJob')
  if (processed !== undefined) addRetained(walk, processed.job.data, undefined, true)
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
 * where its panel shows it (bounded-value.ts): the log calls' arguments, the jobs' data and
 * options (a job a Worker ran is kept as a plain snapshot, without its queue), the mails' data
 * (a message's compiled tree, which holds its attachments again, is let go: the panel then shows
 * what the app gave). Returns the recording's size afterwards.
 */
export function shrinkRecording (recording: Recording): number {
  const before = recordingSize(recording)
  for (const call of recording.logs?.calls ?? []) call.args = boundedValue(call.args).value as unknown[]
  const { context } = recording
  for (const added of context.get('queuedJobs')?.jobs ?? []) {
    added.data = boundedValue(added.data).value
    added.opts = boundedValue(added.opts).value
    if (added.job !== undefined) added.job = { ...snapshot(added.job), data: added.data }
  }
  const processed = context.get('processedJob')
  if (processed !== undefined) processed.job = { ...snapshot(processed.job), data: boundedValue(processed.job.data).value }
  for (const sent of context.get('sentMails')?.messages ?? []) {
    const bounded = boundedValue(sent.mail?.data)
    if (sent.mail !== undefined && bounded.cut) sent.mail = { data: bounded.value as Record<string, unknown>, message: null }
  }
  const after = recordingSize(recording)
  recording.cut = `This unit held ${megabytes(before)}, more than a quarter of the memory storage's maxMemory: its large values (job data, mail bodies and attachments, log fields) were cut (marked "cut by the profiler") to ${megabytes(after)}.`
  return after
}

/** What the queue panel reads of a Job, as plain data (the Job holds its Queue, its Redis client…). */
function snapshot (job: JobLike): JobLike {
  const { id, name, queueName, queueQualifiedName, opts, attemptsMade, attemptsStarted, timestamp } = job
  return { id, name, queueName, queueQualifiedName, data: undefined, opts: boundedValue(opts).value as JobLike['opts'], attemptsMade, attemptsStarted, timestamp }
}

function megabytes (bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`
}
