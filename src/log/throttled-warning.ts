/**
 * A warning for a failure that repeats with every request while it lasts (a store that is
 * down): logged once per interval, with how many were left unlogged since, so an outage leaves
 * a few lines in the log rather than one per request.
 */
export class ThrottledWarning {
  private lastAt = -Infinity
  private suppressed = 0

  constructor (private readonly log: { warn: (fields: object, message: string) => void }, private readonly message: string, private readonly intervalMs = 10_000) {}

  warn (fields: object): void {
    const now = performance.now()
    if (now - this.lastAt < this.intervalMs) {
      this.suppressed++
      return
    }
    this.lastAt = now
    this.log.warn({ ...fields, suppressedSinceLast: this.suppressed }, this.message)
    this.suppressed = 0
  }
}
