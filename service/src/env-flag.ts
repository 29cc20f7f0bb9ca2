import { ServiceConfigError } from './errors.js'

/** The spellings of a boolean that Symfony's `%env(bool:...)%` and most tools accept. */
const TRUE = new Set(['1', 'true', 'on', 'yes'])
const FALSE = new Set(['0', 'false', 'off', 'no', ''])

export const BOOLEAN_SPELLINGS = '1/0, true/false, on/off, yes/no'

/**
 * Reads a boolean environment variable: `1/0`, `true/false`, `on/off`, `yes/no` (any case);
 * unset gives `fallback`. Anything else throws, naming the variable and the accepted values,
 * so that `APP_DEBUG=ture` never silently means false.
 */
export function booleanFromEnv (value: string | undefined, name = 'the variable', fallback = false): boolean {
  if (value === undefined) return fallback
  const spelled = value.trim().toLowerCase()
  if (TRUE.has(spelled)) return true
  if (FALSE.has(spelled)) return false
  throw new ServiceConfigError(`${name} must be one of ${BOOLEAN_SPELLINGS} (got ${JSON.stringify(value)})`)
}
