/**
 * A dependency's outage in the log (a shared store down): one warning with the cause when it
 * starts failing, one information line when it answers again, nothing for the calls between.
 */
export class OutageLog {
  private down = false

  constructor (private readonly log: { warn: (fields: object, message: string) => void, info: (message: string) => void }, private readonly what: string, private readonly meanwhile: string) {}

  failed (error: unknown): void {
    if (this.down) return
    this.down = true
    this.log.warn({ err: error }, `${this.what} is unavailable: ${(error as Error)?.message ?? String(error)}; ${this.meanwhile} until it answers again (logged once per outage)`)
  }

  recovered (): void {
    if (!this.down) return
    this.down = false
    this.log.info(`${this.what} answers again`)
  }
}
