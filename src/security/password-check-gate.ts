import pLimit from 'p-limit'
import type { LimitFunction } from 'p-limit'
import { ServiceUnavailableHttpException, TooManyRequestsHttpException } from '../errors/exceptions.js'

/** How many password checks run at once, how many may wait, and how many one client may have. */
export interface PasswordCheckLimits {
  /** checks running at once (each scrypt check of the default cost holds 32 MiB) */
  concurrency: number
  /** checks waiting for a free slot; beyond, 503 */
  queue: number
  /** checks one client may have running or waiting; beyond, 429 */
  perClient: number
}

export const DEFAULT_PASSWORD_CHECK_LIMITS: PasswordCheckLimits = { concurrency: 2, queue: 8, perClient: 2 }

/**
 * Bounds concurrent password checks. A scrypt check holds 32 MiB and a thread of libuv's pool
 * (shared with file and DNS work) for tens of milliseconds: without a bound, a flood of guesses
 * grows memory with the flood and queues a real login behind all of it. With it, memory is
 * bounded by `concurrency`, a login waits for at most `queue / concurrency + 1` checks, a flood
 * beyond the queue is answered at once (503, `Retry-After: 1`), and one client cannot take more
 * than `perClient` places (429), so a single flooding client cannot fill the queue.
 */
export class PasswordCheckGate {
  private readonly limit: LimitFunction
  private readonly perClient = new Map<string, number>()

  constructor (readonly limits: PasswordCheckLimits) {
    this.limit = pLimit(limits.concurrency)
  }

  /** checks running now */
  get active (): number { return this.limit.activeCount }
  /** checks waiting for a slot */
  get pending (): number { return this.limit.pendingCount }

  async run<T> (client: string, check: () => Promise<T>): Promise<T> {
    const mine = this.perClient.get(client) ?? 0
    if (mine >= this.limits.perClient) {
      throw new TooManyRequestsHttpException(1, 'Too many password checks from this client at once, please try again.')
    }
    if (this.limit.activeCount + this.limit.pendingCount >= this.limits.concurrency + this.limits.queue) {
      throw new ServiceUnavailableHttpException('Too many password checks in progress, please try again shortly.', undefined, 1)
    }
    this.perClient.set(client, mine + 1)
    try {
      return await this.limit(check)
    } finally {
      const left = (this.perClient.get(client) ?? 1) - 1
      if (left === 0) this.perClient.delete(client)
      else this.perClient.set(client, left)
    }
  }
}
