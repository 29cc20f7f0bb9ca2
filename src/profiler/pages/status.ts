/** The colour class of a status: error, warning, redirect, success, or none (no response). */
export function statusKind (status: number): string {
  return status >= 500 ? 'error' : status >= 400 ? 'warning' : status >= 300 ? 'redirect' : status > 0 ? 'success' : 'none'
}
