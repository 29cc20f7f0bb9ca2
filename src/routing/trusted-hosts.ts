import { SuspiciousOperationException } from '../errors/exceptions.js'

/** Hosts already found trusted are remembered, as Symfony does, up to this many. */
const MAX_REMEMBERED = 1024

/**
 * Symfony's `trusted_hosts`: regular expressions a request's host (lower-cased, without the
 * port, from `Host` or a trusted proxy's `X-Forwarded-Host`) must match, each case-insensitive
 * and unanchored as Symfony wraps them (`{pattern}i`). No patterns: every host is trusted.
 */
export class TrustedHosts {
  private readonly patterns: RegExp[]
  private readonly trusted = new Set<string>()

  constructor (sources: readonly string[]) {
    this.patterns = sources.map((source) => new RegExp(source, 'i'))
  }

  get enabled (): boolean {
    return this.patterns.length > 0
  }

  /** Throws Symfony's `Untrusted Host "…".` for a host no pattern matches. */
  check (host: string): void {
    if (this.patterns.length === 0 || this.trusted.has(host)) return
    if (!this.patterns.some((pattern) => pattern.test(host))) {
      throw new SuspiciousOperationException(`Untrusted Host "${host}".`)
    }
    if (this.trusted.size >= MAX_REMEMBERED) this.trusted.clear()
    this.trusted.add(host)
  }
}

/** The option's patterns that are not regular expressions, each with the reason. */
export function invalidHostPatterns (sources: readonly string[]): string[] {
  const problems: string[] = []
  for (const source of sources) {
    try { RegExp(source, 'i') } catch (error) { problems.push(`"${source}": ${(error as Error).message}`) }
  }
  return problems
}
