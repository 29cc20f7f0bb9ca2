/**
 * Something the process does while at least one profiler is alive (its diagnostics channel
 * subscriptions, the `performance.measure` wrapper, `dump()`'s switch): counted, never done once
 * per app, so that two apps in one process neither do it twice nor undo it for each other.
 */
export class ProcessShare {
  private holders = 0

  /** `first`: run when the first holder comes; `last`: when the last one lets go. */
  constructor (private readonly first: () => void = () => {}, private readonly last: () => void = () => {}) {}

  get held (): boolean {
    return this.holders > 0
  }

  /** Holds it (started for the first holder); the function returned lets go, once (stopped after the last). */
  retain (): () => void {
    if (this.holders++ === 0) this.first()
    let released = false
    return () => {
      if (released) return
      released = true
      if (--this.holders === 0) this.last()
    }
  }
}
