import type HandlebarsNs from 'handlebars'

/** Helpers of the kernel's templates; each returns escaped text unless it builds no markup. */
export function registerTemplateHelpers (handlebars: typeof HandlebarsNs): void {
  handlebars.registerHelper('eq', (a: unknown, b: unknown) => a === b)
  handlebars.registerHelper('gt', (a: unknown, b: unknown) => Number(a) > Number(b))
  handlebars.registerHelper('json', (value: unknown) => JSON.stringify(value, null, 2) ?? '')
  handlebars.registerHelper('ms', (value: unknown) => (typeof value === 'number' ? value.toFixed(2) : '0.00'))
  handlebars.registerHelper('statusClass', (status: unknown) => {
    const s = Number(status)
    return s >= 500 ? 'status-error' : s >= 400 ? 'status-warning' : s >= 300 ? 'status-redirect' : 'status-success'
  })
}
