import type HandlebarsNs from 'handlebars'

/** Helpers of the kernel's templates; each returns escaped text unless it builds no markup. */
const HELPERS: Record<string, (...args: never[]) => unknown> = {
  eq: (a: unknown, b: unknown) => a === b,
  gt: (a: unknown, b: unknown) => Number(a) > Number(b),
  json: (value: unknown) => JSON.stringify(value, null, 2) ?? '',
  ms: (value: unknown) => (typeof value === 'number' ? value.toFixed(2) : '0.00'),
  statusClass: (status: unknown) => {
    const s = Number(status)
    return s >= 500 ? 'status-error' : s >= 400 ? 'status-warning' : s >= 300 ? 'status-redirect' : 'status-success'
  }
}

/** Their names, for the compiler's `knownHelpers`. */
export const TEMPLATE_HELPERS: readonly string[] = Object.keys(HELPERS)

export function registerTemplateHelpers (handlebars: typeof HandlebarsNs): void {
  for (const [name, helper] of Object.entries(HELPERS)) handlebars.registerHelper(name, helper as HandlebarsNs.HelperDelegate)
}
