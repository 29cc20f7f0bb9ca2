/** Readable option errors from ajv, shared by the features that validate their own options. */

/** Every problem of an ajv run, each naming its option path (`security.firewalls[0].httpBasic.realm`). */
export function ajvProblems (errors: ReadonlyArray<{ instancePath: string, keyword: string, message?: string, params: Record<string, unknown> }>, root: string): string[] {
  const name = (instancePath: string): string => root + instancePath.replace(/\/(\d+)(?=\/|$)/g, '[$1]').replace(/\//g, '.')
  // an anyOf reports each failed branch: when a branch got deeper (an object with a bad
  // member), its member errors say it all; otherwise one line lists the accepted types
  const alternatives = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath))
  const problems = new Set<string>()
  for (const path of alternatives) {
    if (errors.some((e) => e.instancePath.startsWith(path + '/'))) continue
    const accepted = errors.filter((e) => e.instancePath === path && e.keyword !== 'anyOf')
      .map((e) => e.keyword === 'type' ? String(e.params.type) : e.keyword === 'const' ? JSON.stringify(e.params.allowedValue) : e.message ?? '')
    problems.add(`option "${name(path)}" must be ${[...new Set(accepted)].join(' or ')}`)
  }
  for (const e of errors) {
    if (alternatives.has(e.instancePath) || e.keyword === 'anyOf') continue
    if (e.keyword === 'additionalProperties') problems.add(`unknown option "${name(e.instancePath)}.${String(e.params.additionalProperty)}"`)
    else if (e.keyword === 'required') problems.add(`option "${name(e.instancePath)}.${String(e.params.missingProperty)}" is required`)
    else if (e.keyword === 'pattern' && e.instancePath.endsWith('/realm')) problems.add(`option "${name(e.instancePath)}" must not contain quotes, backslashes or control characters`)
    else problems.add(`option "${name(e.instancePath)}" ${e.message ?? 'is invalid'}`)
  }
  return [...problems]
}
