import { Ajv } from 'ajv'
import type { CoreOptions, ResolvedCoreOptions } from '../src/config/options.js'
import { resolveCoreOptions } from '../src/config/options.js'
import { ajvProblems } from '../src/config/ajv-problems.js'
import { errorCodes } from '../src/errors/codes.js'
import type { ProfilerOptions, ResolvedProfilerOptions } from '../src/profiler/options.js'
import type { ResolvedSessionOptions, SessionOptions } from '../src/session/options.js'
import type { LocaleOptions, ResolvedLocaleOptions } from '../src/locale/options.js'
import type { ResolvedSecurityOptions, SecurityOptions } from '../src/security/options.js'

/** Options of `app.register(kernel, options)`: the kernel's own, and each feature's. */
export interface KernelOptions extends CoreOptions {
  /** the web profiler (debug only; default on in debug): `true`, `false` or its options */
  profiler?: boolean | ProfilerOptions
  /** sessions on a signed cookie (docs/security.md) */
  session?: SessionOptions
  /** default and enabled locales (docs/security.md) */
  locale?: LocaleOptions
  /** firewalls, users and access rules (docs/security.md) */
  security?: SecurityOptions
}

/** Every option resolved: the kernel's own, and each configured feature's (undefined: off). */
export interface ResolvedKernelOptions extends ResolvedCoreOptions {
  /** resolved in production too (its `redact` is the policy of every output); undefined: off */
  profiler: ResolvedProfilerOptions | undefined
  session: ResolvedSessionOptions | undefined
  locale: ResolvedLocaleOptions | undefined
  security: ResolvedSecurityOptions | undefined
}

/** The type each feature's option has; the feature itself says what is inside. */
const validateFeatureTypes = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile({
  type: 'object',
  properties: {
    profiler: { type: ['boolean', 'object'] },
    session: { type: 'object' },
    locale: { type: 'object' },
    security: { type: 'object' }
  }
})

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * Resolves the options of a registration: each configured feature resolves its own (its module
 * loaded only then: an app pays for what it configures), the kernel its own, and one refusal
 * names every bad option of the call, the kernel's first, whichever group it is in.
 */
export async function resolveKernelOptions (given: unknown): Promise<ResolvedKernelOptions> {
  if (!isObject(given)) return { ...resolveCoreOptions(given ?? {}), profiler: undefined, session: undefined, locale: undefined, security: undefined }
  const { profiler, session, locale, security, ...own } = given as KernelOptions & Record<string, unknown>
  const problems = validateFeatureTypes(given) ? [] : ajvProblems(validateFeatureTypes.errors ?? [], '')
  /** a feature's resolution: its problems are collected, not thrown, so that every one is named */
  async function resolved<T> (configured: boolean, resolve: () => Promise<T>): Promise<T | undefined> {
    if (!configured) return undefined
    try {
      return await resolve()
    } catch (error) {
      if (!(error instanceof errorCodes.KERNEL_INVALID_OPTIONS)) throw error
      problems.push((error as Error).message.replace(/^fastify-kernel: invalid (?:"[^"]+" )?options: /, '').replace(/\.$/, ''))
      return undefined
    }
  }
  const debug = own.debug === true
  const features = {
    // checked in production too, so that a typo fails in every mode
    profiler: await resolved(typeof profiler === 'boolean' || isObject(profiler) || (debug && profiler === undefined),
      async () => {
        // the built-in panels' names: the composition's list (the profiler's core knows none)
        const { builtInIntegrations } = await import('../src/profiler/panels/index.js')
        return (await import('../src/profiler/options.js')).resolveProfilerOptions(profiler, debug, builtInIntegrations.map((integration) => integration.name))
      }),
    session: await resolved(isObject(session), async () => (await import('../src/session/options.js')).resolveSessionOptions(session)),
    locale: await resolved(isObject(locale), async () => (await import('../src/locale/options.js')).resolveLocaleOptions(locale)),
    security: await resolved(isObject(security), async () => (await import('../src/security/options.js')).resolveSecurityOptions(security, session !== undefined))
  }
  return { ...resolveCoreOptions(own, problems), ...features }
}
