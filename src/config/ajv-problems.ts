/** Readable option errors from ajv, shared by the features that validate their own options. */

/** Every problem of an ajv run, each naming its option path (`security.firewalls[0].httpBasic.realm`). */
export function ajvProblems (errors: ReadonlyArray<{ instancePath: string, keyword: string, message?: string, params: Record<string, unknown> }>, root: string): string[] {
  const name = (instancePath: string): string => optionName(root, instancePath)
  // an anyOf reports each failed branch: when a branch got deeper (an object with a bad
  // member), its member errors say it all; otherwise one line lists the accepted types
  const alternatives = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath))
  const problems = new Set<string>()
  for (const path of alternatives) {
    if (errors.some((e) => e.instancePath.startsWith(path + '/'))) continue
    const accepted = errors.filter((e) => e.instancePath === path && e.keyword !== 'anyOf')
      .map((e) => e.keyword === 'type' ? String(e.params.type) : e.keyword === 'const' ? JSON.stringify(e.params.allowedValue) : e.keyword === 'enum' ? oneOf(e.params.allowedValues) : e.message ?? '')
    problems.add(`option "${name(path)}" must be ${[...new Set(accepted)].join(' or ')}`)
  }
  for (const e of errors) {
    if (alternatives.has(e.instancePath) || e.keyword === 'anyOf') continue
    if (e.keyword === 'additionalProperties') problems.add(`unknown option "${name(`${e.instancePath}/${String(e.params.additionalProperty)}`)}"`)
    else if (e.keyword === 'required') problems.add(`option "${name(e.instancePath)}.${String(e.params.missingProperty)}" is required`)
    else if (e.keyword === 'pattern' && e.instancePath.endsWith('/realm')) problems.add(`option "${name(e.instancePath)}" must not contain quotes, backslashes or control characters`)
    else if (e.keyword === 'enum') problems.add(`option "${name(e.instancePath)}" must be ${oneOf(e.params.allowedValues)}`)
    else problems.add(`option "${name(e.instancePath)}" ${e.message ?? 'is invalid'}`)
  }
  return [...problems]
}

function oneOf (values: unknown): string {
  return Array.isArray(values) ? values.map((value) => JSON.stringify(value)).join(' or ') : 'one of the allowed values'
}

/**
 * An option's name from its JSON pointer: `security.firewalls[0].name`, `format["/api"]`; with
 * an empty root the kernel's own options are named bare (`debug`, not `.debug`).
 */
function optionName (root: string, instancePath: string): string {
  let name = root
  for (const raw of instancePath.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (/^\d+$/.test(segment)) name += `[${segment}]`
    else if (/^[A-Za-z_$][\w$]*$/.test(segment)) name += name === '' ? segment : `.${segment}`
    else name += `[${JSON.stringify(segment)}]`
  }
  return name
}
