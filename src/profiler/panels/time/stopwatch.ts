import type { Stopwatch, StopwatchEvent, StopwatchPeriod } from '../../../kernel/stopwatch.js'
import { errorCodes } from '../../../errors/codes.js'
import type { OpenSpan, SpanList } from '../../spans.js'
import { OriginCapture } from '../../origin.js'

/** Periods kept per event; later ones still count in its duration. */
const MAX_PERIODS = 1000

class RecordedEvent implements StopwatchEvent {
  readonly ended: StopwatchPeriod[] = []
  duration = 0
  /** the running period: its start (ms from the unit's start) and its span */
  running: { start: number, span: OpenSpan } | undefined

  constructor (readonly name: string, readonly category: string) {}

  get started (): boolean {
    return this.running !== undefined
  }

  get periods (): readonly StopwatchPeriod[] {
    return this.running === undefined ? this.ended : [...this.ended, { start: this.running.start, duration: null }]
  }
}

/**
 * The stopwatch of a profiled unit: each period is an `app` span of the unit (its
 * category in the span's data), so the timeline shows it among the stages, the I/O and the
 * renders; a period still running when the response was sent is shown as running.
 */
export class RecordingStopwatch implements Stopwatch {
  /** made at the first event: most units never time anything of their own */
  private byName: Map<string, RecordedEvent> | undefined

  constructor (private readonly spans: SpanList, private readonly origin: number) {}

  start (name: string, category = 'default'): StopwatchEvent {
    this.byName ??= new Map()
    let event = this.byName.get(name)
    if (event === undefined) {
      event = new RecordedEvent(name, category)
      this.byName.set(name, event)
    }
    if (event.running !== undefined) return event
    const now = performance.now()
    // where the app started it: the caller of start() (or of lap())
    event.running = { start: now - this.origin, span: this.spans.start('app', name, { category: event.category }, now, startedBy) }
    return event
  }

  stop (name: string): StopwatchEvent {
    const event = this.byName?.get(name)
    if (event?.running === undefined) throw new errorCodes.KERNEL_STOPWATCH_NOT_STARTED(name)
    const { start, span } = event.running
    event.running = undefined
    const duration = performance.now() - this.origin - start
    span.end()
    event.duration += duration
    if (event.ended.length < MAX_PERIODS) event.ended.push({ start, duration })
    return event
  }

  lap (name: string): StopwatchEvent {
    this.stop(name)
    return this.start(name)
  }

  isStarted (name: string): boolean {
    return this.byName?.get(name)?.running !== undefined
  }

  events (): readonly StopwatchEvent[] {
    return this.byName === undefined ? [] : [...this.byName.values()]
  }
}

/** A period's origin: the app's call of `start()` (or of `lap()`, which calls it), just below. */
const startedBy = new OriginCapture(RecordingStopwatch.prototype.start, 4)
