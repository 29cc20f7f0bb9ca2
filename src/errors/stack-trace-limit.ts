/**
 * Whole stack traces for debug apps. V8 keeps 10 frames by default, which often stops before
 * the application's own code; a debug page should show all of it. The limit is process-wide,
 * so it is raised while at least one debug app is open and restored when the last one closes;
 * production apps never touch it (capturing frames costs every `new Error()`).
 */
let debugApps = 0
let previous = Error.stackTraceLimit

/** Whole stacks until the returned function is called (once per debug app). */
export function wholeStackTraces (): () => void {
  if (debugApps++ === 0) {
    previous = Error.stackTraceLimit
    Error.stackTraceLimit = Infinity
  }
  let released = false
  return () => {
    if (released) return
    released = true
    if (--debugApps === 0 && Error.stackTraceLimit === Infinity) Error.stackTraceLimit = previous
  }
}
