import type { Badge, Collector } from '../../../kernel/collector.js'
import type { Redactor } from '../../../http/redact.js'
import { truncate } from '../../../http/redact.js'
import type { AddedJob, JobLike, ProcessedJob } from './bullmq.js'
import { PROFILER_PATH } from '../../recording.js'
import { roundMs } from '../../panel-kit/calls.js'
import { countBadge } from '../../panel-kit/calls.js'

/** One job a unit added to a queue, as stored. */
export interface QueuedJobRecord {
  via: 'add' | 'addBulk' | 'flow'
  queue: string
  name: string
  /** BullMQ's id, once added */
  id?: string
  /** milliseconds before it may run */
  delay?: number
  /** attempts allowed (BullMQ's default: 1) */
  attempts: number
  priority?: number
  /** the job's data, secrets masked by the redaction policy */
  data: unknown
  /** milliseconds from the unit's start */
  at: number
  /** a flow's child: the job that waits for it, by queue and name */
  parentJob?: string
  /** it could not be added */
  error?: string
  /** the add had not answered when the profile was made */
  adding?: boolean
}

/** The job a profile of kind `job` is the processing of. */
export interface ProcessedJobRecord {
  queue: string
  name: string
  id?: string
  /** this attempt (1 for the first) */
  attempt: number
  /** attempts allowed */
  attempts: number
  outcome: 'completed' | 'failed' | 'retrying' | 'moved' | 'running'
  error?: string
  delay?: number
  /** epoch milliseconds when it was added */
  addedAt?: number
  data: unknown
}

export interface QueueData {
  /** the job this unit processed, for a profile of kind `job` */
  job?: ProcessedJobRecord
  added: QueuedJobRecord[]
  /** adds beyond the bound: counted, not kept */
  dropped: number
}

declare module '../../../kernel/collector.js' {
  interface CollectedData {
    queue: QueueData
  }
}

function message (error: unknown, redactor: Redactor): string {
  return truncate(redactor.message(error instanceof Error ? error.message : String(error)), 1000)
}

function option (options: unknown, name: string): unknown {
  return typeof options === 'object' && options !== null ? (options as Record<string, unknown>)[name] : undefined
}

function numberOption (name: string, ...sources: unknown[]): number | undefined {
  for (const source of sources) {
    const value = option(source, name)
    if (typeof value === 'number' && Number.isFinite(value)) return value
  }
  return undefined
}

function jobRecord (added: AddedJob, job: JobLike | undefined, redactor: Redactor, parentJob?: string): QueuedJobRecord {
  const sources = job === undefined ? [added.opts, added.defaults] : [job.opts, added.opts, added.defaults]
  const record: QueuedJobRecord = {
    via: added.via,
    queue: truncate(String(job?.queueName ?? added.queue), 200),
    name: truncate(String(job?.name ?? added.name), 200),
    // BullMQ stores 0 for "no retries": one attempt
    attempts: Math.max(1, numberOption('attempts', ...sources) ?? 1),
    data: redactor.value(job === undefined ? added.data : job.data),
    at: roundMs(added.at)
  }
  if (job?.id !== undefined && job.id !== null) record.id = truncate(String(job.id), 200)
  const delay = numberOption('delay', ...sources)
  if (delay !== undefined && delay > 0) record.delay = delay
  const priority = numberOption('priority', ...sources)
  if (priority !== undefined && priority > 0) record.priority = priority
  if (parentJob !== undefined) record.parentJob = parentJob
  if (added.error !== undefined) record.error = message(added.error, redactor)
  else if (job === undefined) record.adding = true
  return record
}

/** A flow's jobs, parent first, each child naming the job that waits for it. */
function flowRecords (added: AddedJob, redactor: Redactor, out: QueuedJobRecord[]): void {
  if (added.node === undefined) {
    out.push(jobRecord(added, undefined, redactor))
    return
  }
  const walk = (node: NonNullable<AddedJob['node']>, parent: string | undefined): void => {
    const record = jobRecord(added, node.job, redactor, parent)
    if (parent !== undefined) record.at = roundMs(added.at)
    out.push(record)
    for (const child of node.children ?? []) walk(child, `${record.queue}:${record.name}${record.id === undefined ? '' : ` #${record.id}`}`)
  }
  walk(added.node, undefined)
}

function processedRecord (processed: ProcessedJob, redactor: Redactor): ProcessedJobRecord {
  const { job } = processed
  const record: ProcessedJobRecord = {
    queue: truncate(processed.queue, 200),
    name: truncate(String(job.name), 200),
    attempt: typeof job.attemptsStarted === 'number' && job.attemptsStarted > 0 ? job.attemptsStarted : (job.attemptsMade ?? 0) + 1,
    attempts: Math.max(1, numberOption('attempts', job.opts) ?? 1),
    outcome: processed.outcome ?? 'running',
    data: redactor.value(job.data)
  }
  if (job.id !== undefined && job.id !== null) record.id = truncate(String(job.id), 200)
  if (processed.error !== undefined) record.error = message(processed.error, redactor)
  const delay = numberOption('delay', job.opts)
  if (delay !== undefined && delay > 0) record.delay = delay
  if (typeof job.timestamp === 'number') record.addedAt = job.timestamp
  return record
}

const OUTCOMES: Record<ProcessedJobRecord['outcome'], { text: string, kind: string }> = {
  completed: { text: 'completed', kind: 'success' },
  failed: { text: 'failed', kind: 'error' },
  retrying: { text: 'failed, will be retried', kind: 'warning' },
  moved: { text: 'moved back by the processor (delayed, waiting)', kind: 'info' },
  running: { text: 'still running when the profile was made', kind: 'none' }
}

/** A delay as a person reads it: `250 ms`, `30 s`, `5 min`, `2 h`, `1 d`. */
export function delayText (ms: number | undefined): string | undefined {
  if (ms === undefined) return undefined
  const units: Array<[number, string]> = [[86_400_000, 'd'], [3_600_000, 'h'], [60_000, 'min'], [1000, 's']]
  for (const [size, unit] of units) if (ms >= size) return `${Number((ms / size).toFixed(1))} ${unit}`
  return `${ms} ms`
}

function json (value: unknown): string {
  const text = JSON.stringify(value, null, 2)
  return truncate(text === undefined ? 'undefined' : text, 16_384)
}

/** The link of an added job to its own profile, found when it is followed (`/_profiler/<token>/queue/<n>`). */
export function queuedJobPath (token: string, index: number): string {
  return `${PROFILER_PATH}/${token}/queue/${index}`
}

/**
 * The queue panel (Symfony's Messenger panel, for BullMQ): the jobs the unit added — queue,
 * name, id, delay, attempts, data masked by the redaction policy — each linking to its own
 * profile when a Worker of this process ran it; and, for a profile of kind `job`, the job it is
 * the processing of (queue, name, id, attempt, outcome). The toolbar item counts the jobs added.
 */
export const queueCollector: Collector<QueueData> = {
  name: 'queue',
  kinds: 'all',
  label: 'Queue',
  order: 48,
  deferred: true,
  template: 'profiler/collectors/queue.hbs',
  masked: true,
  schema: {
    type: 'object',
    required: ['added', 'dropped'],
    properties: {
      dropped: { type: 'number' },
      added: { type: 'array', items: { type: 'object', required: ['queue', 'name', 'attempts', 'at'], properties: { queue: { type: 'string' }, name: { type: 'string' }, id: { type: 'string' }, attempts: { type: 'number' }, at: { type: 'number' } } } },
      job: { type: 'object', required: ['queue', 'name', 'attempt', 'attempts', 'outcome'], properties: { queue: { type: 'string' }, name: { type: 'string' }, attempt: { type: 'number' }, attempts: { type: 'number' }, outcome: { type: 'string' } } }
    }
  },
  collect ({ context, redactor }) {
    const adds = context.get('queuedJobs')
    const processed = context.get('processedJob')
    if (adds === undefined && processed === undefined) return undefined
    const added: QueuedJobRecord[] = []
    for (const entry of adds?.jobs ?? []) {
      if (entry.via === 'flow') flowRecords(entry, redactor, added)
      else added.push(jobRecord(entry, entry.job, redactor))
    }
    const data: QueueData = { added, dropped: adds?.dropped ?? 0 }
    if (processed !== undefined) data.job = processedRecord(processed, redactor)
    return data
  },
  preferred (data) {
    return data.job !== undefined
  },
  panel (data, profile) {
    const outcome = data.job === undefined ? undefined : OUTCOMES[data.job.outcome] ?? OUTCOMES.running
    return {
      job: data.job === undefined ? undefined : { ...data.job, outcomeText: outcome!.text, outcomeKind: outcome!.kind, dataJson: json(data.job.data), delay: delayText(data.job.delay), addedAt: data.job.addedAt === undefined ? undefined : new Date(data.job.addedAt).toISOString() },
      count: data.added.length + data.dropped,
      dropped: data.dropped,
      failed: data.added.filter((job) => job.error !== undefined).length,
      queues: [...new Set(data.added.map((job) => job.queue))].length,
      added: data.added.map((job, index) => ({
        ...job,
        number: index + 1,
        link: job.id === undefined ? undefined : queuedJobPath(profile.token, index + 1),
        delay: delayText(job.delay),
        dataJson: json(job.data),
        rowClass: job.error !== undefined ? 'row-error' : job.adding === true ? 'row-running' : ''
      }))
    }
  },
  badge (data): Badge | undefined {
    return countBadge(data.added, data.dropped)
  },
  toolbar (data) {
    if (data === undefined || data.added.length + data.dropped === 0) return undefined
    const failed = data.added.filter((job) => job.error !== undefined).length
    const byQueue = new Map<string, number>()
    for (const job of data.added) byQueue.set(job.queue, (byQueue.get(job.queue) ?? 0) + 1)
    return {
      count: data.added.length + data.dropped,
      failed,
      delayed: data.added.filter((job) => job.delay !== undefined).length,
      queues: [...byQueue].slice(0, 10).map(([queue, count]) => ({ queue, count }))
    }
  }
}
