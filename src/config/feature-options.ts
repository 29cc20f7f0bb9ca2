import { errorCodes } from '../errors/codes.js'

const given = (value: unknown): boolean => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The problems of the configured features' options, found before the kernel's own are resolved
 * (each feature resolves its options again when it is registered), so that one refusal names
 * every bad option of the call, whichever group it is in. A feature that is not configured is
 * not loaded; an option of the wrong type is left to the kernel's schema, which names it.
 */
export async function featureOptionProblems (options: unknown): Promise<string[]> {
  const o = (given(options) ? options : {}) as Record<string, unknown>
  const checks: Array<() => Promise<unknown>> = []
  if (typeof o.profiler === 'boolean' || given(o.profiler) || (o.debug === true && o.profiler === undefined)) {
    checks.push(async () => (await import('../profiler/options.js')).resolveProfilerOptions(o.profiler as never, o.debug === true))
  }
  if (given(o.session)) checks.push(async () => (await import('../session/options.js')).resolveSessionOptions(o.session))
  if (given(o.locale)) checks.push(async () => (await import('../locale/options.js')).resolveLocaleOptions(o.locale))
  if (given(o.security)) checks.push(async () => (await import('../security/options.js')).resolveSecurityOptions(o.security, o.session !== undefined))
  const problems: string[] = []
  for (const check of checks) {
    try {
      await check()
    } catch (error) {
      if (!(error instanceof errorCodes.KERNEL_INVALID_OPTIONS)) throw error
      problems.push((error as Error).message.replace(/^fastify-kernel: invalid (?:"[^"]+" )?options: /, '').replace(/\.$/, ''))
    }
  }
  return problems
}
