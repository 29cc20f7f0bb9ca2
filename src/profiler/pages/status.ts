import type { ProfileSummary } from '../../kernel/collector.js'

/** The colour class of a status: error, warning, redirect, success, or none (no response). */
export function statusKind (status: number): string {
  return status >= 500 ? 'error' : status >= 400 ? 'warning' : status >= 300 ? 'redirect' : status > 0 ? 'success' : 'none'
}

/**
 * A summary's status as the pages show it: an HTTP status (`aborted` without one), or, for a
 * unit of work other than a request, its exit code read as `ok` or `failed`.
 */
export function statusOfSummary (summary: ProfileSummary): { statusText: string, statusKind: string } {
  if (summary.kind !== undefined && summary.kind !== 'request') {
    return summary.statusCode === 0 ? { statusText: 'ok', statusKind: 'success' } : { statusText: 'failed', statusKind: 'error' }
  }
  return { statusText: summary.statusCode === 0 ? 'aborted' : String(summary.statusCode), statusKind: statusKind(summary.statusCode) }
}
