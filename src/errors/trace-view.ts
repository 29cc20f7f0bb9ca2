import type { StackFrame } from './flatten.js'

/** A stack trace as the debug page and the exception panel show it (`templates/errors/trace.hbs`). */
export type TraceItem =
  | { app: true, frame: StackFrame, open: boolean }
  | { app: false, frames: StackFrame[], count: number }

/**
 * Application frames one by one (the first with a source excerpt opened on it), and each run of
 * framework and dependency frames folded into one collapsed group.
 */
export function traceView (trace: readonly StackFrame[]): { items: TraceItem[], appFrames: number } {
  const items: TraceItem[] = []
  let appFrames = 0
  let opened = false
  for (const frame of trace) {
    if (!frame.vendor) {
      const open: boolean = !opened && frame.excerpt !== undefined
      opened ||= open
      items.push({ app: true, frame, open })
      appFrames++
      continue
    }
    const last = items.at(-1)
    if (last !== undefined && !last.app) {
      last.frames.push(frame)
      last.count++
    } else {
      items.push({ app: false, frames: [frame], count: 1 })
    }
  }
  return { items, appFrames }
}
