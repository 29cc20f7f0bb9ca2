import { setTimeout as delay } from 'node:timers/promises'

/** How long a profile waits for a unit's calls still in flight when it ended (adds, sends: then shown as they were). */
export const IN_FLIGHT_WAIT_MS = 5000

/** Settles once `promises` have (the undefined ones skipped), or after `ms` (an unref'ed timer), whichever comes first. */
export async function settleWithin (promises: ReadonlyArray<Promise<unknown> | undefined>, ms: number): Promise<void> {
  const waiting = promises.filter((promise): promise is Promise<unknown> => promise !== undefined)
  if (waiting.length === 0) return
  await Promise.race([Promise.allSettled(waiting), delay(ms, undefined, { ref: false })])
}
