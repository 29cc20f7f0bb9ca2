import { setTimeout as delay } from 'node:timers/promises'
import { asKernelTraffic, currentKernelContext, kernelTrafficOf } from '../../../kernel/async-context.js'
import type { KernelTraffic } from '../../../kernel/async-context.js'
import type { KernelContext } from '../../../kernel/context.js'
import type { KernelProfiler } from '../../kernel-profiler.js'
import type { UnitOfWork } from '../../unit.js'
import { recordingOf } from '../../recording.js'
import { TOKEN_PATTERN } from '../../token.js'
import type { OpenSpan } from '../../spans.js'
import type { ModuleInstrumentation } from '../../instrument/modules.js'
import { wrapMethod } from '../../instrument/patch.js'

/** The kind of the timeline's spans of jobs added to a queue. */
export const QUEUE_SPAN = 'queue'

/** What the profiler reads of a BullMQ Job (the app's own instance: references only). */
export interface JobLike {
  id?: string
  name: string
  queueName?: string
  /** `<prefix>:<queue name>`: with the id, what names the job in Redis */
  queueQualifiedName?: string
  data: unknown
  opts?: { attempts?: number, delay?: number, priority?: number, [option: string]: unknown }
  attemptsMade?: number
  /** BullMQ 5+: attempts started, this one included */
  attemptsStarted?: number
  /** epoch milliseconds when it was added */
  timestamp?: number
  queue?: { opts?: { maxStartedAttempts?: number } }
}

interface QueueLike { name: string, jobsOpts?: Record<string, unknown> }
interface JobNodeLike { job: JobLike, children?: JobNodeLike[] }
interface FlowJobLike { name: string, queueName: string, data?: unknown, opts?: Record<string, unknown> }

/** One job (or flow) the unit added, as recorded: what it was given, and the Job BullMQ made of it. */
export interface AddedJob {
  via: 'add' | 'addBulk' | 'flow'
  /** milliseconds from the unit's start */
  at: number
  queue: string
  name: unknown
  data: unknown
  opts: unknown
  /** the queue's default job options, under the job's own */
  defaults: unknown
  /** once added */
  job?: JobLike
  /** a flow, once added: its jobs, parent first */
  node?: JobNodeLike
  error?: unknown
}

/** The jobs a unit added to queues (its `queuedJobs` state). */
export class AddedJobs {
  readonly jobs: AddedJob[] = []
  /** beyond the bound: counted, not kept */
  dropped = 0
  /** adds still in flight: the profile waits for them (bounded) */
  readonly pending = new Set<Promise<void>>()

  constructor (readonly token: string, readonly recorder: JobRecorder, readonly origin: number) {}
}

/** A job a Worker of this process ran inside its own profile (that unit's `processedJob` state). */
export interface ProcessedJob {
  job: JobLike
  queue: string
  /** `completed`; `failed`; `retrying` (failed, with attempts left); `moved` (delayed, waiting, rate-limited by the processor) */
  outcome?: 'completed' | 'failed' | 'retrying' | 'moved'
  error?: unknown
}

declare module '../../../kernel/context.js' {
  interface KernelState {
    /** the profiler that records the unit, for the jobs it adds (a recording extension sets it) */
    jobRecorder: JobRecorder
    /** the jobs the unit added to BullMQ queues */
    queuedJobs: AddedJobs
    /** the BullMQ job this unit is the processing of */
    processedJob: ProcessedJob
  }
}

/** What records a job processed in this process: an app's profiler. */
export type JobRecorder = Pick<KernelProfiler, 'record'>

/** Jobs kept per unit. */
export const MAX_JOBS = 200
/**
 * The job option that carries the token of the profile that added the job, with the job, to the
 * Worker that runs it, whichever process that is: BullMQ stores options it does not know as
 * they are, and gives them back with the job. The job's data stays as the app made it.
 */
export const PARENT_OPTION = 'profilerParent'
/** Parent links kept in this process (the oldest forgotten first). */
const MAX_LINKS = 10_000

/** The profilers alive in this process, the newest last: the one that records a job no profile added. */
const recorders: JobRecorder[] = []
/** The profile that added each job (`<queue qualified name>:<id>`), and the profiler that recorded it. */
const links = new Map<string, { token: string, recorder: JobRecorder }>()
/** Adds in flight anywhere in the process: a worker waits for them before looking its job's parent up. */
const inflight = new Set<Promise<void>>()
/** How long a worker waits for adds in flight (an add that hangs, Redis gone, must not hold every job). */
const INFLIGHT_WAIT_MS = 1000

/** Jobs processed by this process's Workers are recorded with `recorder` while it is alive; returns what stops it. */
export function recordJobsWith (recorder: JobRecorder): () => void {
  recorders.push(recorder)
  return () => {
    const index = recorders.indexOf(recorder)
    if (index !== -1) recorders.splice(index, 1)
    for (const [key, link] of links) if (link.recorder === recorder) links.delete(key)
  }
}

function linkKey (job: JobLike): string | undefined {
  if (job.id === undefined || job.id === null) return undefined
  return `${job.queueQualifiedName ?? job.queueName ?? ''}:${String(job.id)}`
}

function remember (job: JobLike | undefined, adds: AddedJobs): void {
  const key = job === undefined ? undefined : linkKey(job)
  if (key === undefined) return
  links.delete(key)
  links.set(key, { token: adds.token, recorder: adds.recorder })
  if (links.size > MAX_LINKS) links.delete(links.keys().next().value!)
}

function rememberTree (node: JobNodeLike | undefined, adds: AddedJobs): void {
  if (node === undefined || node === null) return
  remember(node.job, adds)
  for (const child of node.children ?? []) rememberTree(child, adds)
}

/** The jobs list of the recorded unit the calling code runs in, if any (and it has not ended). */
function currentAdds (): AddedJobs | undefined {
  const context = currentKernelContext()
  const recording = recordingOf(context)
  if (context === undefined || recording === undefined || recording.spans.closed) return undefined
  let adds = context.get('queuedJobs')
  if (adds === undefined) {
    const recorder = context.get('jobRecorder')
    if (recorder === undefined) return undefined
    adds = new AddedJobs(recording.token, recorder, context.startedAt)
    context.set('queuedJobs', adds)
  }
  return adds
}

/** A job's options with its parent profile's token: a copy, the app's object is left as it is. */
function withParent (opts: unknown, token: string): Record<string, unknown> {
  return { ...(typeof opts === 'object' && opts !== null ? opts as Record<string, unknown> : {}), [PARENT_OPTION]: token }
}

/** A flow's nodes with their parent profile's token, children included (copies). */
function flowWithParent (flow: unknown, token: string): unknown {
  if (typeof flow !== 'object' || flow === null) return flow
  const node = flow as { opts?: unknown, children?: unknown }
  return { ...node, opts: withParent(node.opts, token), ...(Array.isArray(node.children) ? { children: node.children.map((child) => flowWithParent(child, token)) } : {}) }
}

/** The parent profile a job carries in its options, if it carries a token. */
function carriedParent (job: JobLike): string | undefined {
  const token = job.opts?.[PARENT_OPTION]
  return typeof token === 'string' && TOKEN_PATTERN.test(token) ? token : undefined
}

function record (adds: AddedJobs, entry: Omit<AddedJob, 'at'>): AddedJob | undefined {
  if (adds.jobs.length >= MAX_JOBS) {
    adds.dropped++
    return undefined
  }
  const added = entry as AddedJob
  added.at = performance.now() - adds.origin
  adds.jobs.push(added)
  return added
}

/** Follows an add's promise: the Job(s) it made, or its failure; the profile and the workers wait for it. */
function follow<T> (adds: AddedJobs, result: unknown, span: OpenSpan | undefined, added: (value: T) => void, failed: (error: unknown) => void): void {
  const settled = Promise.resolve(result as T).then((value) => {
    try { added(value) } catch { /* a value of another shape: nothing recorded */ }
    span?.end()
  }, (error: unknown) => {
    failed(error)
    span?.fail(error)
  })
  inflight.add(settled)
  adds.pending.add(settled)
  settled.then(() => {
    inflight.delete(settled)
    adds.pending.delete(settled)
  }, () => undefined)
}

function startSpan (context: KernelContext | undefined, name: string): OpenSpan | undefined {
  return recordingOf(context)?.spans.start(QUEUE_SPAN, name)
}

type Method = (...args: never[]) => unknown

function wrapAdd (add: Method): Method {
  return function (this: QueueLike, ...args: unknown[]): unknown {
    const adds = currentAdds()
    if (adds === undefined) return add.apply(this, args as never[])
    const [name, data, opts] = args
    const entry = record(adds, { via: 'add', queue: String(this.name), name, data, opts, defaults: this.jobsOpts })
    const span = startSpan(currentKernelContext(), `add ${String(this.name)}:${String(name)}`)
    const result = add.apply(this, [name, data, withParent(opts, adds.token), ...args.slice(3)] as never[])
    follow<JobLike>(adds, result, span, (job) => {
      if (entry !== undefined) entry.job = job
      remember(job, adds)
    }, (error) => { if (entry !== undefined) entry.error = error })
    return result
  }
}

function wrapAddBulk (addBulk: Method): Method {
  return function (this: QueueLike, ...args: unknown[]): unknown {
    const adds = currentAdds()
    const list = args[0]
    if (adds === undefined || !Array.isArray(list)) return addBulk.apply(this, args as never[])
    const entries = (list as Array<{ name?: unknown, data?: unknown, opts?: unknown }>).map((item) =>
      record(adds, { via: 'addBulk', queue: String(this.name), name: item?.name, data: item?.data, opts: item?.opts, defaults: this.jobsOpts }))
    const span = startSpan(currentKernelContext(), `addBulk ${String(this.name)} (${list.length} jobs)`)
    const carried = (list as unknown[]).map((item) => typeof item === 'object' && item !== null ? { ...item, opts: withParent((item as { opts?: unknown }).opts, adds.token) } : item)
    const result = addBulk.apply(this, [carried, ...args.slice(1)] as never[])
    follow<JobLike[]>(adds, result, span, (jobs) => {
      jobs.forEach((job, index) => {
        const entry = entries[index]
        if (entry !== undefined) entry.job = job
        remember(job, adds)
      })
    }, (error) => { for (const entry of entries) if (entry !== undefined) entry.error = error })
    return result
  }
}

function wrapFlow (method: Method, many: boolean): Method {
  return function (this: unknown, ...args: unknown[]): unknown {
    const adds = currentAdds()
    const flows = (many ? args[0] : [args[0]]) as FlowJobLike[] | undefined
    if (adds === undefined || !Array.isArray(flows)) return method.apply(this, args as never[])
    const entries = flows.map((flow) => record(adds, { via: 'flow', queue: String(flow?.queueName), name: flow?.name, data: flow?.data, opts: flow?.opts, defaults: undefined }))
    const span = startSpan(currentKernelContext(), `flow ${flows.map((flow) => `${String(flow?.queueName)}:${String(flow?.name)}`).join(', ')}`)
    const carried = many ? flows.map((flow) => flowWithParent(flow, adds.token)) : flowWithParent(flows[0], adds.token)
    const result = method.apply(this, [carried, ...args.slice(1)] as never[])
    follow<JobNodeLike | JobNodeLike[] | undefined>(adds, result, span, (value) => {
      const nodes = many ? value as JobNodeLike[] : [value as JobNodeLike]
      nodes.forEach((node, index) => {
        const entry = entries[index]
        if (entry !== undefined && node !== undefined) entry.node = node
        rememberTree(node, adds)
      })
    }, (error) => { for (const entry of entries) if (entry !== undefined) entry.error = error })
    return result
  }
}

/** The errors with which a processor hands its job back to BullMQ rather than failing it. */
const MOVES = new Set(['DelayedError', 'WaitingError', 'WaitingChildrenError', 'RateLimitError'])

function isMove (error: unknown): boolean {
  const { name, message } = (error ?? {}) as { name?: unknown, message?: unknown }
  return (typeof name === 'string' && MOVES.has(name)) || message === 'bullmq:rateLimitExceeded'
}

/** As BullMQ's Job#shouldRetryJob decides, before it does: attempts left, not unrecoverable. */
function willRetry (job: JobLike, error: unknown): boolean {
  if ((error as { name?: unknown } | null)?.name === 'UnrecoverableError') return false
  const maxStarted = job.queue?.opts?.maxStartedAttempts
  if (typeof maxStarted === 'number' && maxStarted > 0 && maxStarted <= (job.attemptsStarted ?? 0)) return false
  return (job.attemptsMade ?? 0) + 1 < (job.opts?.attempts ?? 1)
}

interface WorkerLike { name: string }

/**
 * A job taken by a Worker of this process, run inside a profile of its own (kind `job`, named
 * `<queue>:<job name>`), linked to the profile that added it: the token its options carry,
 * whichever process added it (or, for a job added before this version, the link this process
 * kept when it added it).
 */
async function processRecorded (worker: WorkerLike, call: Method, args: unknown[]): Promise<unknown> {
  const job = args[0] as JobLike
  // the add that made this job may still be settling in this process: its link comes with it
  if (inflight.size > 0) await Promise.race([Promise.allSettled([...inflight]), delay(INFLIGHT_WAIT_MS, undefined, { ref: false })])
  const key = linkKey(job)
  const link = key === undefined ? undefined : links.get(key)
  const recorder = link !== undefined && recorders.includes(link.recorder) ? link.recorder : recorders.at(-1)
  if (recorder === undefined) return await call.apply(worker, args as never[])
  const queue = String(worker.name ?? job.queueName)
  const unit: UnitOfWork = { kind: 'job', name: `${queue}:${String(job.name)}` }
  const parent = carriedParent(job) ?? link?.token
  // a job added outside any profile runs with none, even inside a unit (a Worker started by a request)
  unit.parent = parent ?? null
  const processed: ProcessedJob = { job, queue }
  const outside = currentKernelContext()
  let moved: { error: unknown } | undefined
  const value = await recorder.record(unit, async () => {
    const context = currentKernelContext()
    // record() runs the function unrecorded when the save budget is spent
    if (context !== undefined && context !== outside) context.set('processedJob', processed)
    try {
      const result = await call.apply(worker, args as never[])
      processed.outcome = 'completed'
      return result
    } catch (error) {
      if (isMove(error)) {
        // not a failure: BullMQ puts the job back (delayed, waiting for children, rate-limited)
        processed.outcome = 'moved'
        moved = { error }
        return undefined
      }
      processed.outcome = willRetry(job, error) ? 'retrying' : 'failed'
      processed.error = error
      throw error
    }
  })
  if (moved !== undefined) throw moved.error
  return value
}

function wrapProcess (call: Method): Method {
  return function (this: WorkerLike, ...args: unknown[]): unknown {
    if (recorders.length === 0 || typeof args[0] !== 'object' || args[0] === null) return call.apply(this, args as never[])
    return processRecorded(this, call, args)
  }
}

const instrumented = new WeakSet<object>()

/** What BullMQ sends to Redis for itself: its Lua scripts (25 KB each), its reads, its polling. */
const BULLMQ_TRAFFIC: KernelTraffic = { purpose: 'BullMQ', library: 'BullMQ' }

/** A method of BullMQ's Redis backend, run as BullMQ's own traffic in a unit (everything it sends is BullMQ's, not the app's). */
function ownTraffic (method: Method): Method {
  return function (this: unknown, ...args: unknown[]): unknown {
    const unit = currentKernelContext()
    if (unit === undefined || kernelTrafficOf(unit) !== undefined) return method.apply(this, args as never[])
    return asKernelTraffic(BULLMQ_TRAFFIC, () => method.apply(this, args as never[]))
  }
}

/**
 * The methods of BullMQ's Redis backend (BullMQ 6's `RedisQueueBackend`, BullMQ 5's `Scripts`):
 * through them goes every command BullMQ sends for a Queue, a Job, a Worker or a FlowProducer.
 */
function wrapBackend (prototype: object | undefined): Array<() => void> {
  if (prototype === undefined) return []
  const undo: Array<() => void> = []
  for (const name of Object.getOwnPropertyNames(prototype)) {
    if (name === 'constructor') continue
    const descriptor = Object.getOwnPropertyDescriptor(prototype, name)
    if (typeof descriptor?.value !== 'function' || descriptor.writable !== true) continue
    undo.push(wrapMethod(prototype, name, ownTraffic))
  }
  return undo
}

/** The BullMQ versions the instrumentation is written for (`attemptsStarted` is BullMQ 5's; the suite runs 6). */
export const BULLMQ_VERSIONS = '>=5.0.0 <7'

/**
 * BullMQ publishes nothing a profiler can hear (its `telemetry` option is for OpenTelemetry
 * spans), so the app's own copy is instrumented while a profiler is alive: `Queue#add`,
 * `Queue#addBulk`, `FlowProducer#add` and `#addBulk` record the jobs a profiled unit adds, and
 * `Worker#callProcessJob` — where the Worker calls the app's processor — runs each job in a
 * profile of its own. Prototypes are wrapped, so Queues and Workers made before the profiler
 * started are seen too; restored when the last profiler closes.
 */
export const bullmqInstrumentation: ModuleInstrumentation = {
  name: 'bullmq',
  files: ['/bullmq/dist/cjs/index.js', '/bullmq/dist/esm/index.js'],
  versions: BULLMQ_VERSIONS,
  esm: true,
  instrument (exports, copy) {
    const api = exports as { Queue?: { prototype: object }, Worker?: { prototype: object }, FlowProducer?: { prototype: object }, RedisQueueBackend?: { prototype: object }, Scripts?: { prototype: object } }
    const queue = api.Queue?.prototype
    const worker = api.Worker?.prototype
    if (queue !== undefined && instrumented.has(queue)) return undefined
    const q = (queue ?? {}) as Record<string, unknown>
    const w = (worker ?? {}) as Record<string, unknown>
    const lacking = [
      ...(['add', 'addBulk'] as const).filter((name) => typeof q[name] !== 'function').map((name) => `Queue#${name}`),
      ...(typeof w.callProcessJob !== 'function' ? ['Worker#callProcessJob'] : [])
    ]
    if (lacking.length > 0 || queue === undefined || worker === undefined) {
      copy.lacks(lacking, 'the jobs a unit adds and the jobs its Workers run')
      return undefined
    }
    instrumented.add(queue)
    const undo = [
      wrapMethod(queue, 'add', wrapAdd),
      wrapMethod(queue, 'addBulk', wrapAddBulk),
      wrapMethod(worker, 'callProcessJob', wrapProcess),
      ...wrapBackend((api.RedisQueueBackend ?? api.Scripts)?.prototype)
    ]
    const flow = api.FlowProducer?.prototype as Record<string, unknown> | undefined
    if (flow !== undefined && typeof flow.add === 'function' && typeof flow.addBulk === 'function') {
      undo.push(wrapMethod(flow, 'add', (add: Method) => wrapFlow(add, false)), wrapMethod(flow, 'addBulk', (addBulk: Method) => wrapFlow(addBulk, true)))
    }
    return () => {
      for (const restore of undo.reverse()) restore()
      instrumented.delete(queue)
    }
  }
}
